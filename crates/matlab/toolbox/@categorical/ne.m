function tf = ne(a, b)
% NE  ~(a == b).

  tf = ~eq(a, b);
end
