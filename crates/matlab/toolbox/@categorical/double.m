function d = double(c)
% DOUBLE  Each element's category number (its place in categories(c)); 0 for
% <undefined> (MATLAB gives NaN there; a classifier's class numbers want integers).

  d = c.codes;
end
