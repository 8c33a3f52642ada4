function predict_endpoints = challenge(sample_path)
% CHALLENGE  Paroxysmal AF episodes of one record: an N x 2 matrix of [start, end]
% sample indices (1-based, as MATLAB counts), [] when there is none.
%
% Per beat, the irregularity of the RR intervals around it (the mean absolute successive
% difference over the median RR, in a window of 12 intervals); beats above 0.09 are AF
% beats; a 9-beat majority vote smooths them; runs of at least 12 beats are episodes.
% Nearly all beats AF: the whole record; almost none: no episode.
  [signal, fs] = rdsamp(sample_path);
  len = size(signal, 1);
  peaks = qrs_peaks(signal(:, 1), fs);
  predict_endpoints = [];
  if numel(peaks) < 16
    return;
  end
  rr = diff(peaks) / fs;
  n = numel(rr);
  half = 6;
  irr = zeros(n, 1);
  for k = 1:n
    idx = max(1, k - half):min(n, k + half);
    r = rr(idx);
    irr(k) = mean(abs(diff(r))) / median(r);
  end
  af = irr > 0.09;
  vote = conv(double(af), ones(9, 1), 'same') >= 5;
  frac = mean(vote);
  if frac > 0.9
    predict_endpoints = [1, len];
    return;
  end
  if frac < 0.02
    return;
  end
  d = diff([0; vote; 0]);
  starts = find(d == 1);
  stops = find(d == -1) - 1;
  keep = (stops - starts + 1) >= 12;
  starts = starts(keep);
  stops = stops(keep);
  % Interval k runs from beat k to beat k + 1.
  predict_endpoints = [peaks(starts), peaks(stops + 1)];
end
