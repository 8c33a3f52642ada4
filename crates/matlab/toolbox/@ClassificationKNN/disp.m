function disp(mdl)
% DISP  What the model is: its classes and k.

  names = mdl.ClassNames(:)';
  if ~iscell(names)
    names = num2cell(names);
  end
  names = cellfun(@num2str, names, 'UniformOutput', false);
  printf('  ClassificationKNN (physiojudge''s fitcknn): %d classes (%s), %d neighbours, %d training rows\n', ...
         numel(names), strjoin(names, ', '), mdl.NumNeighbors, size(mdl.X, 1));
end
