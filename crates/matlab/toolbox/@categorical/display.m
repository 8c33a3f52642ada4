function display(c)
% DISPLAY  `labels` without a semicolon: the names, as MATLAB shows them.

  printf('%s =\n\n', inputname(1));
  disp(c);
end
