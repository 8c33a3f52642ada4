function c = categorical(values)
% CATEGORICAL  MATLAB's categorical array, as far as entries use it, on Octave 7 (which
% has none): an empty one (`labels = categorical;`) grown by assigning names
% (`labels(j) = 'Present';`), or one made from a cell array of character vectors, a
% character vector, numbers or logicals. Categories are the sorted distinct values of
% what it was made from, then names assigned later, in the order they came (as in
% MATLAB). Methods: indexing and indexed assignment, cellstr, char, categories,
% double (the category numbers, 0 for <undefined>), ==, ~=, size, numel, length,
% isempty, end. Anything else MATLAB's categorical has is not here (docs/matlab.md).

  s = struct('codes', zeros(0, 0), 'cats', {cell(0, 1)});
  if nargin == 0
    c = class(s, 'categorical');
    return;
  end
  if isa(values, 'categorical')
    c = values;
    return;
  end
  names = categorical_names(values);
  [cats, ~, codes] = unique(names(:));
  % An empty character vector is MATLAB's <undefined>, not a category.
  undefined = strcmp(cats, '');
  if any(undefined)
    map = zeros(numel(cats), 1);
    map(~undefined) = 1:nnz(~undefined);
    codes = map(codes);
    cats = cats(~undefined);
  end
  s.codes = reshape(codes, size(names));
  s.cats = cats(:);
  c = class(s, 'categorical');
end

function names = categorical_names(values)
  if iscellstr(values)
    names = values;
  elseif ischar(values)
    names = cellstr(values);
  elseif islogical(values)
    t = {'false', 'true'};
    names = reshape(t(double(values) + 1), size(values));
  elseif isnumeric(values)
    names = arrayfun(@num2str, values, 'UniformOutput', false);
  else
    error('categorical:type', ['categorical: cannot make categories of a %s (physiojudge''s ' ...
          'categorical takes cell arrays of character vectors, characters, numbers and logicals)'], ...
          class(values));
  end
end
