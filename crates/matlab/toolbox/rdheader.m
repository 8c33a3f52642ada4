function hdr = rdheader(recordName)
% RDHEADER  Read a WFDB header (RECORD.hea) into a struct.
%
%   hdr = rdheader('data/100')
%
% physiojudge's own reader, written for the judge's Octave runtime. Fields, one entry
% per signal where a field is per signal:
%   record_name, n_seg, n_sig, fs, counter_freq, base_counter, sig_len, base_time,
%   base_date, file_name (cell), fmt (numeric), samps_per_frame, skew, byte_offset,
%   adc_gain, baseline, units (cell), adc_res, adc_zero, init_value, checksum,
%   block_size, sig_name (cell), comments (cell)
% Defaults follow the WFDB header specification: fs 250, gain 200 when 0 or absent,
% baseline = ADC zero, units mV.

  name = [recordName '.hea'];
  fid = fopen(name, 'r');
  if fid < 0
    error('rdheader:open', 'rdheader: cannot open %s', name);
  end
  cleanup = onCleanup(@() fclose(fid));
  lines = {};
  comments = {};
  while true
    l = fgetl(fid);
    if ~ischar(l)
      break;
    end
    l = strtrim(l);
    if isempty(l)
      continue;
    end
    if l(1) == '#'
      comments{end + 1} = strtrim(l(2:end)); %#ok<AGROW>
      continue;
    end
    % A comment may follow a field on the same line.
    k = find(l == '#', 1);
    if ~isempty(k)
      comments{end + 1} = strtrim(l(k + 1:end)); %#ok<AGROW>
      l = strtrim(l(1:k - 1));
    end
    lines{end + 1} = l; %#ok<AGROW>
  end
  if isempty(lines)
    error('rdheader:format', 'rdheader: %s has no record line', name);
  end

  rec = strsplit(lines{1});
  hdr = struct();
  [hdr.record_name, rest] = strtok(rec{1}, '/');
  hdr.n_seg = 1;
  if ~isempty(rest)
    hdr.n_seg = str2double(rest(2:end));
  end
  hdr.n_sig = str2double(rec{2});
  hdr.fs = 250;
  hdr.counter_freq = [];
  hdr.base_counter = [];
  if numel(rec) >= 3
    f = rec{3};
    [fs, rest] = strtok(f, '/');
    hdr.fs = str2double(fs);
    if ~isempty(rest)
      % Named tokens: an optional group that did not match is '' (plain tokens of
      % optional groups are dropped by Octave and kept by MATLAB).
      t = regexp(rest, '^/(?<cf>[^()]+)(?:\((?<bc>.*)\))?$', 'names', 'once');
      if isempty(t) || isempty(t.cf)
        error('rdheader:format', 'rdheader: %s: frequency %s not understood', name, f);
      end
      hdr.counter_freq = str2double(t.cf);
      if ~isempty(t.bc)
        hdr.base_counter = str2double(t.bc);
      end
    end
  end
  hdr.sig_len = [];
  if numel(rec) >= 4
    hdr.sig_len = str2double(rec{4});
  end
  hdr.base_time = '';
  hdr.base_date = '';
  if numel(rec) >= 5
    hdr.base_time = rec{5};
  end
  if numel(rec) >= 6
    hdr.base_date = rec{6};
  end
  if hdr.n_seg > 1
    error('rdheader:multisegment', ...
          'rdheader: %s is a multi-segment record, which this reader does not read', name);
  end
  if numel(lines) - 1 < hdr.n_sig
    error('rdheader:format', 'rdheader: %s names %d signals but describes %d', ...
          name, hdr.n_sig, numel(lines) - 1);
  end

  n = hdr.n_sig;
  hdr.file_name = cell(1, n);
  hdr.fmt = zeros(1, n);
  hdr.samps_per_frame = ones(1, n);
  hdr.skew = zeros(1, n);
  hdr.byte_offset = zeros(1, n);
  hdr.adc_gain = 200 * ones(1, n);
  hdr.baseline = zeros(1, n);
  hdr.units = repmat({'mV'}, 1, n);
  hdr.adc_res = zeros(1, n);
  hdr.adc_zero = zeros(1, n);
  hdr.init_value = zeros(1, n);
  hdr.checksum = zeros(1, n);
  hdr.block_size = zeros(1, n);
  hdr.sig_name = cell(1, n);
  for s = 1:n
    % The description is the rest of the line after the eighth field.
    [w, rest] = fields_of(lines{s + 1}, 8);
    hdr.file_name{s} = w{1};
    t = regexp(w{2}, '^(?<fmt>\d+)(?:x(?<spf>\d+))?(?::(?<skew>\d+))?(?:\+(?<off>\d+))?$', ...
               'names', 'once');
    if isempty(t) || isempty(t.fmt)
      error('rdheader:format', 'rdheader: %s signal %d: format %s not understood', ...
            name, s, w{2});
    end
    hdr.fmt(s) = str2double(t.fmt);
    if ~isempty(t.spf)
      hdr.samps_per_frame(s) = str2double(t.spf);
    end
    if ~isempty(t.skew)
      hdr.skew(s) = str2double(t.skew);
    end
    if ~isempty(t.off)
      hdr.byte_offset(s) = str2double(t.off);
    end
    have_baseline = false;
    if numel(w) >= 3
      g = regexp(w{3}, '^(?<gain>[-+0-9.eE]+)(?:\((?<base>[-+0-9]+)\))?(?:/(?<units>.*))?$', ...
                 'names', 'once');
      if isempty(g) || isempty(g.gain)
        error('rdheader:format', 'rdheader: %s signal %d: gain %s not understood', ...
              name, s, w{3});
      end
      gain = str2double(g.gain);
      if gain ~= 0
        hdr.adc_gain(s) = gain;
      end
      if ~isempty(g.base)
        hdr.baseline(s) = str2double(g.base);
        have_baseline = true;
      end
      if ~isempty(g.units)
        hdr.units{s} = g.units;
      end
    end
    if numel(w) >= 4
      hdr.adc_res(s) = str2double(w{4});
    end
    if numel(w) >= 5
      hdr.adc_zero(s) = str2double(w{5});
    end
    if ~have_baseline
      hdr.baseline(s) = hdr.adc_zero(s);
    end
    if numel(w) >= 6
      hdr.init_value(s) = str2double(w{6});
    else
      hdr.init_value(s) = hdr.adc_zero(s);
    end
    if numel(w) >= 7
      hdr.checksum(s) = str2double(w{7});
    end
    if numel(w) >= 8
      hdr.block_size(s) = str2double(w{8});
    end
    hdr.sig_name{s} = strtrim(rest);
  end
  hdr.comments = comments;
end

function [w, rest] = fields_of(line, count)
  % The first COUNT space-separated fields of LINE, and what follows them.
  w = {};
  rest = line;
  while numel(w) < count
    rest = regexprep(rest, '^\s+', '');
    if isempty(rest)
      break;
    end
    [tok, rest] = strtok(rest);
    w{end + 1} = tok; %#ok<AGROW>
  end
end
