function s = string(x)
% STRING  MATLAB's string(), as far as entries use it, on Octave 7, which has no string
% class: the text as a cell array of character vectors of x's shape, which Octave's
% text functions (strjoin, strcat, strcmp, strsplit, regexprep, fprintf('%s', s{:}))
% take where MATLAB's take strings. Numbers become their num2str text, logicals
% 'true'/'false', a categorical its names. Not MATLAB's: `+` joining strings and `==`
% comparing them do not work on the result (docs/matlab.md).

  if nargin ~= 1
    error('string:nargin', 'string: one argument expected (physiojudge''s string)');
  end
  if iscellstr(x)
    s = x;
  elseif ischar(x)
    if size(x, 1) <= 1
      s = {x};
    else
      s = cellstr(x);
    end
  elseif islogical(x)
    t = {'false', 'true'};
    s = reshape(t(double(x) + 1), size(x));
  elseif isnumeric(x)
    s = arrayfun(@num2str, x, 'UniformOutput', false);
  elseif isa(x, 'categorical')
    s = cellstr(x);
  else
    error('string:type', ['string: cannot convert a %s (physiojudge''s string takes text, ' ...
          'cell arrays of text, numbers, logicals and categoricals)'], class(x));
  end
end
