function wrann(recordName, annotator, ann, anntype, subtype, chan, num, comments)
% WRANN  Write a WFDB annotation file (MIT format), with the WFDB Toolbox's arguments.
%
%   wrann(recordName, annotator, ann, anntype, subtype, chan, num, comments)
%
% ann       positions in samples, 1-based (MATLAB indexing, as rdann returns them),
%           in increasing order
% anntype   one mnemonic character each ('N', '+', ...), a char array or cellstr
% subtype, chan, num   numbers, one each or [] for 0
% comments  aux strings, a cellstr ('' or [] for none)
%
% Writes RECORD.ANNOTATOR; rdann reads back exactly what was given. physiojudge's own
% writer, for its Octave runtime.

  n = numel(ann);
  if nargin < 4 || isempty(anntype), anntype = repmat('N', n, 1); end
  if nargin < 5 || isempty(subtype), subtype = zeros(n, 1); end
  if nargin < 6 || isempty(chan), chan = zeros(n, 1); end
  if nargin < 7 || isempty(num), num = zeros(n, 1); end
  if nargin < 8 || isempty(comments), comments = repmat({''}, n, 1); end
  if iscell(anntype), anntype = char(anntype); end
  if any(diff(ann(:)) < 0)
    error('wrann:order', 'wrann: annotations must be in increasing order of position');
  end
  table = ' NLRaVFJASEj/Q~?|?sT*D"=pB^t+u?![]en@xf()r';
  words = zeros(0, 1);
  prev = 0;
  cur_chan = 0;
  cur_num = 0;
  for k = 1:n
    code = find(table == anntype(k, 1), 1) - 1;
    if isempty(code) || anntype(k, 1) == '?'
      error('wrann:type', 'wrann: annotation %d: no code for %s', k, anntype(k, 1));
    end
    t = ann(k) - 1;
    interval = t - prev;
    if interval > 1023 || interval < 0
      % SKIP: a 32-bit interval, high word first, then the annotation with 0.
      v = mod(interval, 2^32);
      words(end + 1:end + 3, 1) = [59 * 1024; floor(v / 65536); mod(v, 65536)];
      interval = 0;
    end
    words(end + 1, 1) = code * 1024 + interval;
    prev = t;
    if subtype(k) ~= 0
      words(end + 1, 1) = 61 * 1024 + mod(subtype(k), 1024);
    end
    if chan(k) ~= cur_chan
      cur_chan = chan(k);
      words(end + 1, 1) = 62 * 1024 + mod(cur_chan, 1024);
    end
    if num(k) ~= cur_num
      cur_num = num(k);
      words(end + 1, 1) = 60 * 1024 + mod(cur_num, 1024);
    end
    aux = comments{k};
    if ~isempty(aux)
      bytes = double(aux(:))';
      if numel(bytes) > 255
        error('wrann:aux', 'wrann: annotation %d: aux strings hold at most 255 bytes', k);
      end
      words(end + 1, 1) = 63 * 1024 + numel(bytes);
      if mod(numel(bytes), 2) == 1
        bytes(end + 1) = 0;
      end
      words = [words; (bytes(1:2:end) + 256 * bytes(2:2:end))']; %#ok<AGROW>
    end
  end
  words(end + 1, 1) = 0;
  name = [recordName '.' annotator];
  fid = fopen(name, 'w', 'ieee-le');
  if fid < 0
    error('wrann:open', 'wrann: cannot write %s', name);
  end
  fwrite(fid, words, 'uint16', 0, 'ieee-le');
  fclose(fid);
end
