function tf = eq(a, b)
% EQ  labels == 'name' (either side), or two categoricals element by element, by name.
% An <undefined> element equals nothing, as in MATLAB.

  [na, ua] = categorical_side(a);
  [nb, ub] = categorical_side(b);
  tf = strcmp(na, nb);
  tf = unset(unset(tf, ua), ub);
end

function tf = unset(tf, undefined)
  if isscalar(undefined) && undefined
    tf(:) = false;
  elseif numel(undefined) == numel(tf)
    tf(undefined) = false;
  end
end

function [names, undefined] = categorical_side(x)
  if isa(x, 'categorical')
    names = cellstr(x);
    undefined = double(x) == 0;
    if numel(names) == 1
      names = names{1};
    end
  elseif ischar(x)
    names = x;
    undefined = false;
  elseif iscellstr(x)
    names = x;
    undefined = false;
  else
    error('categorical:eq', 'categorical: cannot compare with a %s', class(x));
  end
end
