function tf = isempty(c)
% ISEMPTY  No labels.

  tf = isempty(c.codes);
end
