function mdl = fitcknn(X, Y, varargin)
% FITCKNN  MATLAB's k-nearest-neighbour classifier, on Octave (whose statistics package
% 1.5.3 has no classifier objects): physiojudge's suggestion where an entry trains a
% TreeBagger or another classifier Octave lacks, since its model is used the same way:
%   mdl = fitcknn(X, Y, 'NumNeighbors', 5, 'Standardize', true);
%   [label, score] = mdl.predict(Xnew);   % or predict(mdl, Xnew)
% (mdl.predict(X) gives all three outputs to an expression it is part of, such as
% another call's arguments: write predict(mdl, X) there, as in MATLAB.)
% X: one row per observation. Y: a categorical, a cell array of character vectors,
% a character matrix (a row each) or numbers, one per row of X. Options (MATLAB's
% names): NumNeighbors (default 1, as MATLAB), Standardize (false), Distance
% ('euclidean' only), BreakTies ('smallest' only). Rows of X with a NaN and
% observations without a label are left out, as MATLAB does.
% The classes (mdl.ClassNames) are the distinct labels, sorted. predict gives
% labels as a cell array of character vectors (as TreeBagger's predict does; MATLAB's
% fitcknn gives them in Y's own type), numbers for numeric Y; score(i, k) is the
% fraction of the neighbours of row i in class k; cost is 1 - score.

  if nargin < 2
    error('fitcknn: X and Y are needed');
  end
  if ~isnumeric(X) && ~islogical(X)
    error('fitcknn: X must be a numeric matrix, one row per observation');
  end
  X = double(X);
  k = 1;
  standardize = false;
  if mod(numel(varargin), 2) ~= 0
    error('fitcknn: options come in name, value pairs');
  end
  for a = 1:2:numel(varargin)
    name = varargin{a};
    value = varargin{a + 1};
    if ~ischar(name)
      error('fitcknn: an option name must be a character vector');
    end
    switch lower(name)
      case 'numneighbors'
        if ~isscalar(value) || value < 1 || value ~= fix(value)
          error('fitcknn: NumNeighbors must be a positive integer');
        end
        k = double(value);
      case 'standardize'
        standardize = logical(value);
      case 'distance'
        if ~strcmpi(value, 'euclidean')
          error('fitcknn: only the euclidean distance is supported (physiojudge''s fitcknn)');
        end
      case 'breakties'
        if ~strcmpi(value, 'smallest')
          error('fitcknn: only BreakTies ''smallest'' is supported (physiojudge''s fitcknn)');
        end
      otherwise
        error('fitcknn: option %s is not supported (physiojudge''s fitcknn has NumNeighbors, Standardize, Distance, BreakTies)', name);
    end
  end
  if isa(Y, 'categorical')
    labels = cellstr(Y);
    labels(double(Y) == 0) = {''};
    numeric = false;
  elseif iscellstr(Y)
    labels = Y;
    numeric = false;
  elseif ischar(Y)
    labels = cellstr(Y);
    numeric = false;
  elseif isnumeric(Y) || islogical(Y)
    labels = double(Y);
    numeric = true;
  else
    error('fitcknn: Y must be a categorical, a cell array of character vectors, characters or numbers');
  end
  labels = labels(:);
  if numel(labels) ~= size(X, 1)
    error('fitcknn: Y has %d labels for %d rows of X', numel(labels), size(X, 1));
  end
  if numeric
    keep = ~isnan(labels);
  else
    keep = ~cellfun(@isempty, labels);
  end
  keep = keep & ~any(isnan(X), 2);
  X = X(keep, :);
  labels = labels(keep);
  if isempty(labels)
    error('fitcknn: no observation has both a label and a complete row of X');
  end
  [classes, ~, y] = unique(labels);
  mu = zeros(1, size(X, 2));
  sigma = ones(1, size(X, 2));
  if standardize
    mu = mean(X, 1);
    sigma = std(X, 0, 1);
    % A constant column: left as it is rather than divided by zero (MATLAB's NaN).
    sigma(sigma == 0 | isnan(sigma)) = 1;
  end
  mdl = ClassificationKNN(struct( ...
    'X', (X - mu) ./ sigma, 'Y', y(:), 'ClassNames', {classes(:)}, ...
    'NumNeighbors', min(k, size(X, 1)), 'Mu', mu, 'Sigma', sigma, ...
    'Standardize', standardize, 'NumericLabels', numeric));
end
