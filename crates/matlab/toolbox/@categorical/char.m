function t = char(c)
% CHAR  The names, one row each (as MATLAB's char of a categorical).

  t = char(cellstr(c));
end
