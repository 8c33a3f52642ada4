function out = subsref(c, s)
% SUBSREF  labels(idx): a categorical of those elements, with the same categories.

  if ~strcmp(s(1).type, '()')
    error('categorical:index', 'categorical: only c(index) is supported (no fields, no {})');
  end
  out = c;
  out.codes = c.codes(s(1).subs{:});
  if numel(s) > 1
    out = subsref(out, s(2:end));
  end
end
