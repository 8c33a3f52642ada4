function [ann, anntype, subtype, chan, num, comments] = rdann(recordName, annotator, C, N, N0)
% RDANN  Read a WFDB annotation file, with the WFDB Toolbox's arguments and outputs.
%
%   [ann, anntype, subtype, chan, num, comments] = rdann(recordName, annotator, C, N, N0)
%
% recordName  the record's path without extension ('/data/data_0_1')
% annotator   the annotation file's extension ('atr' reads RECORD.atr)
% C           keep only annotations of this channel (default [] : all)
% N           keep annotations up to this sample, 1-based (default [] : all)
% N0          keep annotations from this sample, 1-based (default 1)
%
% ann         where each annotation is, in samples, 1-based (MATLAB indexing: the WFDB
%             library's sample 0 is 1 here, as in the WFDB Toolbox)
% anntype     one mnemonic character each ('N', '+', 'V', ...; '?' for a code with no
%             one-character mnemonic)
% subtype, chan, num   as written (num and chan carry over from one annotation to the
%             next, as in the WFDB library)
% comments    the auxiliary strings ('(AFIB', ...), '' where there is none
%
% physiojudge's own reader of the MIT annotation format, for its Octave runtime.

  if nargin < 3, C = []; end
  if nargin < 4, N = []; end
  if nargin < 5 || isempty(N0), N0 = 1; end

  name = [recordName '.' annotator];
  fid = fopen(name, 'r', 'ieee-le');
  if fid < 0
    error('rdann:open', 'rdann: cannot open %s', name);
  end
  words = fread(fid, Inf, 'uint16=>double', 0, 'ieee-le');
  fclose(fid);

  n = numel(words);
  ann = zeros(n, 1);
  code = zeros(n, 1);
  subtype = zeros(n, 1);
  chan = zeros(n, 1);
  num = zeros(n, 1);
  comments = cell(n, 1);
  count = 0;
  t = 0;
  cur_chan = 0;
  cur_num = 0;
  i = 1;
  while i <= n
    w = words(i);
    a = bitshift(w, -10);
    d = bitand(w, 1023);
    i = i + 1;
    if a == 0 && d == 0
      break;
    end
    switch a
      case 59 % SKIP: a 32-bit interval follows, high word first
        if i + 1 > n
          break;
        end
        skip = words(i) * 65536 + words(i + 1);
        if skip >= 2^31
          skip = skip - 2^32;
        end
        t = t + skip;
        i = i + 2;
      case 60 % NUM of the annotation just read
        if count > 0
          cur_num = signed10(d);
          num(count) = cur_num;
        end
      case 61 % SUB
        if count > 0
          subtype(count) = signed10(d);
        end
      case 62 % CHN
        if count > 0
          cur_chan = d;
          chan(count) = cur_chan;
        end
      case 63 % AUX: d bytes, padded to an even count
        nwords = ceil(d / 2);
        if count > 0
          b = words(i:min(n, i + nwords - 1));
          bytes = reshape([bitand(b, 255)'; bitshift(b, -8)'], 1, []);
          bytes = bytes(1:min(d, numel(bytes)));
          % The aux string ends at its first NUL, as the WFDB library reads it.
          z = find(bytes == 0, 1);
          if ~isempty(z)
            bytes = bytes(1:z - 1);
          end
          comments{count} = char(bytes);
        end
        i = i + nwords;
      otherwise
        t = t + d;
        count = count + 1;
        ann(count) = t;
        code(count) = a;
        chan(count) = cur_chan;
        num(count) = cur_num;
        comments{count} = '';
    end
  end

  ann = ann(1:count) + 1;
  code = code(1:count);
  subtype = subtype(1:count);
  chan = chan(1:count);
  num = num(1:count);
  comments = comments(1:count);

  keep = ann >= N0;
  if ~isempty(N)
    keep = keep & ann <= N;
  end
  if ~isempty(C)
    keep = keep & chan == C;
  end
  ann = ann(keep);
  subtype = subtype(keep);
  chan = chan(keep);
  num = num(keep);
  comments = comments(keep);
  anntype = mnemonic(code(keep));
end

function v = signed10(d)
  v = d;
  if v >= 512
    v = v - 1024;
  end
end

function c = mnemonic(codes)
  % The WFDB library's one-character mnemonics, by code (0 to 41).
  % Codes 15 and 17 have none ('?').
  table = ' NLRaVFJASEj/Q~?|?sT*D"=pB^t+u?![]en@xf()r';
  c = repmat('?', numel(codes), 1);
  for k = 1:numel(codes)
    if codes(k) >= 0 && codes(k) + 1 <= numel(table)
      c(k) = table(codes(k) + 1);
    end
  end
end
