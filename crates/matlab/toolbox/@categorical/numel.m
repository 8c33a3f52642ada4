function n = numel(c, varargin)
% NUMEL  How many labels (an index's count when indices are given, as Octave asks).

  if nargin > 1
    n = numel(c.codes(varargin{:}));
  else
    n = numel(c.codes);
  end
end
