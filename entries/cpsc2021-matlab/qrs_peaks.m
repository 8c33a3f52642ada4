function peaks = qrs_peaks(ecg, fs)
% QRS_PEAKS  R-peak sample indices (1-based) of one ECG lead in mV.
%
% Band-pass 5-20 Hz (where QRS energy dominates P and T waves and baseline wander),
% squared slope, 0.1 s moving average; a peak is a local maximum of that energy above
% a threshold that follows the QRS level over 10 s blocks, at least 0.25 s after the
% previous one (240 bpm).
  ecg = ecg(:);
  ecg(isnan(ecg)) = 0;
  [b, a] = butter(2, [5 20] / (fs / 2));
  x = filtfilt(b, a, ecg);
  e = [0; diff(x)] .^ 2;
  w = max(1, round(0.1 * fs));
  e = conv(e, ones(w, 1) / w, 'same');
  n = numel(e);
  block = round(10 * fs);
  level = zeros(n, 1);
  for s = 1:block:n
    idx = s:min(n, s + block - 1);
    v = sort(e(idx));
    level(idx) = v(max(1, round(0.98 * numel(v))));
  end
  thr = 0.25 * level;
  is_max = [false; e(2:end-1) > e(1:end-2) & e(2:end-1) >= e(3:end); false];
  cand = find(is_max & e > thr);
  refractory = round(0.25 * fs);
  peaks = zeros(numel(cand), 1);
  count = 0;
  for k = 1:numel(cand)
    c = cand(k);
    if count > 0 && c - peaks(count) < refractory
      if e(c) > e(peaks(count))
        peaks(count) = c;
      end
    else
      count = count + 1;
      peaks(count) = c;
    end
  end
  peaks = peaks(1:count);
end
