function c = subsasgn(c, s, value)
% SUBSASGN  labels(j) = 'name', labels(idx) = {'a', 'b'}, labels(idx) = other_categorical,
% labels(idx) = [] (removes). A name not yet a category becomes the last one; the array
% grows as MATLAB's does, the gaps <undefined>.

  if numel(s) ~= 1 || ~strcmp(s.type, '()')
    error('categorical:index', 'categorical: only c(index) = value is supported');
  end
  if isnumeric(value) && isempty(value) && ~isa(value, 'categorical')
    c.codes(s.subs{:}) = [];
    return;
  end
  if isa(value, 'categorical')
    names = cellstr(value);
  elseif ischar(value)
    names = {value};
  elseif iscellstr(value)
    names = value;
  else
    error('categorical:assign', ['categorical: cannot assign a %s to a categorical (give a ' ...
          'character vector, a cell array of them, or a categorical)'], class(value));
  end
  codes = zeros(size(names));
  for k = 1:numel(names)
    if strcmp(names{k}, '') || strcmp(names{k}, '<undefined>')
      continue;
    end
    at = find(strcmp(c.cats, names{k}), 1);
    if isempty(at)
      c.cats{end + 1, 1} = names{k};
      at = numel(c.cats);
    end
    codes(k) = at;
  end
  if numel(codes) == 1
    codes = codes(1);
  end
  c.codes(s.subs{:}) = codes;
end
