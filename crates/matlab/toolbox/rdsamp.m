function [signal, Fs, tm] = rdsamp(recordName, signalList, N, N0, rawUnits, highResolution)
% RDSAMP  Read a WFDB record's samples, with the WFDB Toolbox's arguments and outputs.
%
%   [signal, Fs, tm] = rdsamp(recordName, signalList, N, N0, rawUnits, highResolution)
%
% recordName  the record's path without extension ('/data/data_0_1')
% signalList  signals to read, 1-based, in the order wanted (default [] : all)
% N           the last sample to read, 1-based and included (default [] : the end)
% N0          the first sample to read, 1-based (default 1)
% rawUnits    0 or 1: physical units, double (default 0); 2: physical units, single;
%             3: digital values, int16; 4: digital values, int64
% highResolution  accepted and ignored (every signal here has one sample per frame)
%
% signal      one column per signal: (digital - baseline) / gain, NaN where a sample
%             is the format's invalid value (digital outputs keep that value)
% Fs          the sampling frequency
% tm          the sample times in seconds from the record's start (column)
%
% physiojudge's own reader for its Octave runtime (the MATLAB WFDB Toolbox calls the
% WFDB library through Java, which the judge does not ship). Formats 16, 61, 80, 212
% with byte offsets, one sample per frame, single-segment records.

  if nargin < 2, signalList = []; end
  if nargin < 3, N = []; end
  if nargin < 4 || isempty(N0), N0 = 1; end
  if nargin < 5 || isempty(rawUnits), rawUnits = 0; end
  if nargin < 6, highResolution = 0; end %#ok<NASGU>

  hdr = rdheader(recordName);
  Fs = hdr.fs;
  if any(hdr.samps_per_frame > 1)
    error('rdsamp:unsupported', ...
          'rdsamp: %s has signals with several samples per frame, which this reader does not read', ...
          recordName);
  end
  if isempty(signalList)
    signalList = 1:hdr.n_sig;
  end
  if any(signalList < 1 | signalList > hdr.n_sig | signalList ~= fix(signalList))
    error('rdsamp:signal', 'rdsamp: %s has signals 1 to %d', recordName, hdr.n_sig);
  end
  dir = fileparts(recordName);

  % Every signal file once, with the signals it holds (frames interleave them).
  files = unique(hdr.file_name, 'stable');
  digital = cell(1, hdr.n_sig);
  len = hdr.sig_len;
  for f = 1:numel(files)
    in_file = find(strcmp(hdr.file_name, files{f}));
    fmt = hdr.fmt(in_file(1));
    if any(hdr.fmt(in_file) ~= fmt) || any(hdr.byte_offset(in_file) ~= hdr.byte_offset(in_file(1)))
      error('rdsamp:format', 'rdsamp: %s: signals of %s differ in format', recordName, files{f});
    end
    if isempty(dir)
      path = files{f};
    else
      path = fullfile(dir, files{f});
    end
    values = read_file(path, fmt, hdr.byte_offset(in_file(1)), numel(in_file));
    for k = 1:numel(in_file)
      digital{in_file(k)} = values(k, :)';
    end
    if isempty(len)
      len = size(values, 2);
    end
  end

  if isempty(N)
    N = len;
  end
  if N0 < 1 || N > len || N < N0 - 1
    error('rdsamp:range', 'rdsamp: %s has samples 1 to %d (asked %d to %d)', ...
          recordName, len, N0, N);
  end
  rows = N0:N;
  switch rawUnits
    case {0, 1, 2}
      signal = zeros(numel(rows), numel(signalList));
    case 3
      signal = zeros(numel(rows), numel(signalList), 'int16');
    case 4
      signal = zeros(numel(rows), numel(signalList), 'int64');
    otherwise
      error('rdsamp:rawUnits', 'rdsamp: rawUnits must be 0 to 4');
  end
  for c = 1:numel(signalList)
    s = signalList(c);
    d = digital{s};
    if numel(d) < N
      error('rdsamp:short', 'rdsamp: %s: %s holds %d samples of signal %d, the header says %d', ...
            recordName, hdr.file_name{s}, numel(d), s, len);
    end
    d = d(rows);
    if rawUnits >= 3
      signal(:, c) = d;
    else
      p = (d - hdr.baseline(s)) / hdr.adc_gain(s);
      p(d == invalid_value(hdr.fmt(s))) = NaN;
      signal(:, c) = p;
    end
  end
  if rawUnits == 2
    signal = single(signal);
  end
  tm = (rows' - 1) / Fs;
end

function v = invalid_value(fmt)
  switch fmt
    case {16, 61}
      v = -32768;
    case 212
      v = -2048;
    case 80
      v = -128;
    otherwise
      v = NaN;
  end
end

function values = read_file(path, fmt, offset, k)
  % The digital samples of a signal file: K rows (signals), one column a frame.
  fid = fopen(path, 'r', 'ieee-le');
  if fid < 0
    error('rdsamp:open', 'rdsamp: cannot open %s', path);
  end
  cleanup = onCleanup(@() fclose(fid));
  if fseek(fid, offset, 'bof') ~= 0
    error('rdsamp:open', 'rdsamp: %s is shorter than its byte offset %d', path, offset);
  end
  switch fmt
    case 16
      raw = fread(fid, Inf, 'int16=>double', 0, 'ieee-le');
    case 61
      raw = fread(fid, Inf, 'int16=>double', 0, 'ieee-be');
    case 80
      raw = fread(fid, Inf, 'uint8=>double') - 128;
    case 212
      b = fread(fid, Inf, 'uint8=>double');
      b = b(1:3 * floor(numel(b) / 3));
      b = reshape(b, 3, []);
      first = b(1, :) + bitand(b(2, :), 15) * 256;
      second = b(3, :) + bitshift(bitand(b(2, :), 240), 4);
      raw = reshape([first; second], [], 1);
      raw(raw >= 2048) = raw(raw >= 2048) - 4096;
    otherwise
      error('rdsamp:format', 'rdsamp: %s: format %d is not read by this reader (16, 61, 80, 212 are)', ...
            path, fmt);
  end
  frames = floor(numel(raw) / k);
  values = reshape(raw(1:frames * k), k, frames);
end
