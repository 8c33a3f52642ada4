function n = length(c)
% LENGTH  The longest dimension of the array of labels.

  n = length(c.codes);
end
