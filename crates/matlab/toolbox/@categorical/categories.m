function cats = categories(c)
% CATEGORIES  The categories, a column cell array of character vectors.

  cats = c.cats(:);
end
