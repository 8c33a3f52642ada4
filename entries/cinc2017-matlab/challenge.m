function challenge(recordName)
% CHALLENGE  Classifies one PhysioNet 2017 record (RECORD.hea and RECORD.mat in the
% current folder) and appends "RECORD,LABEL" to answers.txt: N normal, A AF, O other
% rhythm, ~ too noisy.
%
% From the R peaks (qrs_peaks.m): the RR intervals' irregularity and the heart rate,
% then a few hand-set rules chosen by looking at the 48 public records (README.md).
  [signal, fs] = rdsamp(recordName);
  label = classify_ecg(signal(:, 1), fs);
  fid = fopen('answers.txt', 'a');
  fprintf(fid, '%s,%s\n', recordName, label);
  fclose(fid);
end

function label = classify_ecg(ecg, fs)
  peaks = qrs_peaks(ecg, fs);
  duration = numel(ecg) / fs;
  if numel(peaks) < 6 || numel(peaks) / duration > 4
    % Fewer than 6 beats, or more than 240 a minute: no rhythm to judge.
    label = '~';
    return;
  end
  rr = diff(peaks) / fs;
  hr = 60 / median(rr);
  % Mean and median absolute successive RR differences, over the median RR: AF is
  % irregular beat after beat (both high); a few ectopic beats raise only the mean;
  % noise taken for beats makes both very high.
  irr = mean(abs(diff(rr))) / median(rr);
  mirr = median(abs(diff(rr))) / median(rr);
  if irr >= 0.4 || mirr >= 0.35
    label = '~';
  elseif mirr > 0.1
    label = 'A';
  elseif hr > 100 || hr < 52 || irr > 0.06
    label = 'O';
  else
    label = 'N';
  end
end
