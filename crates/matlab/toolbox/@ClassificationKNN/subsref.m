function varargout = subsref(mdl, s)
% SUBSREF  mdl.predict(X) (as MATLAB's objects allow) and reading a property
% (mdl.ClassNames, mdl.NumNeighbors, ...).

  if ~strcmp(s(1).type, '.')
    error('ClassificationKNN: only mdl.predict(X) and mdl.PROPERTY are supported');
  end
  name = s(1).subs;
  if strcmp(name, 'predict')
    if numel(s) < 2 || ~strcmp(s(2).type, '()')
      error('ClassificationKNN: predict needs its arguments: mdl.predict(X)');
    end
    % Octave asks this method for numel(mdl) = 1 output whatever the caller's
    % [label, score] = ... wants (a '.' index is read as a cs-list query), and passes
    % on every output it returns: so all three, of which an assignment takes its own.
    % The price: inside another call's arguments or brackets all three are passed
    % (use predict(mdl, X) there; docs/matlab.md).
    [label, score, cost] = predict(mdl, s(2).subs{:});
    varargout = {label, score, cost};
    rest = s(3:end);
  else
    fields = struct(mdl);
    if ~isfield(fields, name)
      error('ClassificationKNN: no property %s', name);
    end
    varargout = {fields.(name)};
    rest = s(2:end);
  end
  if ~isempty(rest)
    varargout = {subsref(varargout{1}, rest)};
  end
end
