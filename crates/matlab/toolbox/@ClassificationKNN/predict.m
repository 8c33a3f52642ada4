function [label, score, cost] = predict(mdl, X)
% PREDICT  [label, score, cost] = predict(mdl, X): each row's class by a vote of its
% NumNeighbors nearest training rows (euclidean, after the training's standardisation);
% score(i, k) the fraction of the votes for class k (columns in mdl.ClassNames order),
% cost = 1 - score; ties go to the first class. label: a cell array of character
% vectors (numbers when the model was trained on numbers).

  if ~isnumeric(X) && ~islogical(X)
    error('predict: X must be a numeric matrix');
  end
  X = double(X);
  if size(X, 2) ~= size(mdl.X, 2)
    error('predict: X has %d columns, the model was trained on %d', size(X, 2), size(mdl.X, 2));
  end
  Q = (X - mdl.Mu) ./ mdl.Sigma;
  T = mdl.X;
  d2 = sum(Q .^ 2, 2) + sum(T .^ 2, 2)' - 2 * (Q * T');
  % A row with a NaN has no neighbours closer than any other: it gets the first class.
  d2(isnan(d2)) = Inf;
  [~, order] = sort(d2, 2);
  k = mdl.NumNeighbors;
  votes = mdl.Y(order(:, 1:k));
  if size(X, 1) == 1
    votes = votes(:)';
  end
  K = numel(mdl.ClassNames);
  score = zeros(size(X, 1), K);
  for c = 1:K
    score(:, c) = sum(votes == c, 2) / k;
  end
  [~, best] = max(score, [], 2);
  label = mdl.ClassNames(best);
  cost = 1 - score;
end
