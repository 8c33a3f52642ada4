function mdl = ClassificationKNN(s)
% CLASSIFICATIONKNN  What physiojudge's fitcknn returns (see fitcknn). Without an
% argument, an empty model: Octave's load makes one to rebuild a saved model.

  if nargin == 0
    s = struct('X', zeros(0, 0), 'Y', zeros(0, 1), 'ClassNames', {cell(0, 1)}, ...
               'NumNeighbors', 1, 'Mu', zeros(1, 0), 'Sigma', zeros(1, 0), ...
               'Standardize', false, 'NumericLabels', false);
  end
  mdl = class(s, 'ClassificationKNN');
end
