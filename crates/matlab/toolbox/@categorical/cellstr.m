function names = cellstr(c)
% CELLSTR  Each element's category name, '<undefined>' where it has none (as MATLAB).

  all_names = [{'<undefined>'}; c.cats(:)];
  names = reshape(all_names(c.codes + 1), size(c.codes));
end
