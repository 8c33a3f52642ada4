function varargout = importdata(varargin)
% IMPORTDATA  Octave's importdata, except for a text file with no numbers in it, which
% MATLAB reads as a cell array of its lines (a list of record names, as the CPSC 2021
% example reads its RECORDS) where Octave 7 returns a struct: that case is read here
% as MATLAB does; every other goes to Octave's own importdata.

  if nargin >= 1 && ischar(varargin{1}) && exist(varargin{1}, 'file') == 2
    text = fileread(varargin{1});
    lines = regexp(text, '\r?\n', 'split');
    lines = lines(~cellfun(@isempty, strtrim(lines)));
    if ~isempty(lines) && all(cellfun(@(l) isnan(str2double(strtok(l, sprintf(' \t,;')))), lines))
      varargout{1} = lines(:);
      for k = 2:nargout
        varargout{k} = [];
      end
      return;
    end
  end
  % Octave's own: found with this folder off the path for the call.
  here = fileparts(mfilename('fullpath'));
  rmpath(here);
  restore = onCleanup(@() addpath(here));
  [varargout{1:max(1, nargout)}] = importdata(varargin{:});
end
