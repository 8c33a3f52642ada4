function disp(c)
% DISP  The names, space separated, one row of the array per line.

  names = cellstr(c);
  for r = 1:size(names, 1)
    printf('  %s\n', strjoin(names(r, :), '  '));
  end
end
