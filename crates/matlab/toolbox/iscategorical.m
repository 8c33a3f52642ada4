function tf = iscategorical(x)
% ISCATEGORICAL  Whether x is a categorical (physiojudge's, docs/matlab.md).

  tf = isa(x, 'categorical');
end
