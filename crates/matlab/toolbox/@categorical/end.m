function e = end(c, k, n)
% END  labels(end), labels(end + 1) = ...

  if n == 1
    e = numel(c.codes);
  else
    e = size(c.codes, k);
  end
end
