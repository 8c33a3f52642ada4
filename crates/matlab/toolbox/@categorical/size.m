function varargout = size(c, varargin)
% SIZE  The size of the array of labels.

  [varargout{1:max(nargout, 1)}] = size(c.codes, varargin{:});
end
