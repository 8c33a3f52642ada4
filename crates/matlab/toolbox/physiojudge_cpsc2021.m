function physiojudge_cpsc2021(data_dir, out_dir, work_dir)
% PHYSIOJUDGE_CPSC2021  The CPSC 2021 MATLAB layout (docs/matlab.md): what the
% organisers' scripts did with an entry's Result.m, then each record's answer as the
% judge reads it.
%
% 1. WORK_DIR/RECORDS lists the records of DATA_DIR (its .hea files, sorted).
% 2. Result(RECORDS, [DATA_DIR '/'], [WORK_DIR '/mat/']) is called, as the official
%    example's README says; it saves one RECORD.mat holding predict_endpoints each.
% 3. Each RECORD.mat (MAT or Octave's own format: load reads both) becomes
%    OUT_DIR/RECORD.json, {"predict_endpoints": [[s, e], ...]}, the Python layout's
%    answer. MATLAB's endpoints are 1-based sample indices; the JSON holds the 0-based
%    samples the scorer counts in (s - 1, e - 1). A record without its .mat gets no
%    JSON: the judge reports it missing.

  heas = dir(fullfile(data_dir, '*.hea'));
  names = sort(cellfun(@(n) n(1:end - 4), {heas.name}, 'UniformOutput', false));
  records = fullfile(work_dir, 'RECORDS');
  fid = fopen(records, 'w');
  fprintf(fid, '%s\n', names{:});
  fclose(fid);
  mat_dir = fullfile(work_dir, 'mat');
  mkdir(mat_dir);
  Result(records, [data_dir '/'], [mat_dir '/']);
  for k = 1:numel(names)
    mat = fullfile(mat_dir, [names{k} '.mat']);
    if ~exist(mat, 'file')
      fprintf(stderr, 'physiojudge: %s.mat was not written\n', names{k});
      continue;
    end
    s = load(mat);
    if ~isfield(s, 'predict_endpoints')
      fprintf(stderr, 'physiojudge: %s.mat holds no predict_endpoints\n', names{k});
      continue;
    end
    write_json(fullfile(out_dir, [names{k} '.json']), s.predict_endpoints);
  end
end

function write_json(path, p)
  % Rows of two numbers stay rows; anything else is written as it is (a vector as one
  % list) for the scorer to judge as it judges the Python layout's odd shapes.
  fid = fopen(path, 'w');
  if isnumeric(p) && ndims(p) == 2 && size(p, 2) == 2
    rows = arrayfun(@(r) sprintf('[%.17g, %.17g]', p(r, 1) - 1, p(r, 2) - 1), ...
                    1:size(p, 1), 'UniformOutput', false);
    fprintf(fid, '{"predict_endpoints": [%s]}\n', strjoin(rows, ', '));
  elseif isnumeric(p) && isempty(p)
    fprintf(fid, '{"predict_endpoints": []}\n');
  else
    fprintf(fid, '{"predict_endpoints": %s}\n', jsonencode(p));
  end
  fclose(fid);
end
