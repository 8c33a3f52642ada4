function physiojudge_report(err)
% PHYSIOJUDGE_REPORT  Print an error the way a participant can act on: the message,
% where it was raised (file, line, column), and when Octave lacks a function the entry
% calls, one line the judge reads (docs/matlab.md, "Honest failures"):
%   physiojudge: unsupported_matlab function=NAME file=FILE line=N
% followed by what to use instead, where Octave has an equivalent.

  fprintf(stderr, 'error: %s\n', err.message);
  for k = 1:numel(err.stack)
    s = err.stack(k);
    fprintf(stderr, '    %s at line %d column %d (%s)\n', s.name, s.line, s.column, s.file);
  end
  name = '';
  if strcmp(err.identifier, 'Octave:undefined-function')
    t = regexp(err.message, '^''([^'']+)'' undefined', 'tokens', 'once');
    if ~isempty(t)
      name = t{1};
    end
  end
  if isempty(name)
    return;
  end
  % The frame that called it: the innermost one of the entry's own files (not Octave's,
  % not our toolbox's, this folder and its class folders).
  ours = [fileparts(mfilename('fullpath')) '/'];
  file = '';
  line = 0;
  for k = 1:numel(err.stack)
    s = err.stack(k);
    if ~isempty(s.file) && isempty(strfind(s.file, '/usr/share/octave')) ...
        && ~strncmp(s.file, ours, numel(ours))
      file = s.file;
      line = s.line;
      break;
    end
  end
  fprintf(stderr, 'physiojudge: unsupported_matlab function=%s file=%s line=%d\n', ...
          name, file, line);
  advice = instead(name);
  if isempty(advice) && ~isempty(strfind(err.message, 'not yet implemented in Octave'))
    advice = sprintf('GNU Octave %s does not implement %s (MATLAB has it)', version(), name);
  elseif isempty(advice)
    advice = sprintf(['%s is neither a function of GNU Octave %s (with its signal and ' ...
                      'statistics packages) nor a file of the entry'], name, version());
  end
  fprintf(stderr, 'physiojudge: instead: %s\n', advice);
end

function a = instead(name)
  % What Octave has in place of MATLAB functions it lacks (checked against the runtime:
  % docs/matlab.md lists them).
  switch name
    case {'TreeBagger', 'fitcensemble', 'fitctree', 'ClassificationTree'}
      a = [sprintf('Octave %s and its statistics package have no decision trees or tree ', version()) ...
           'ensembles. Replace the call TreeBagger(NumTrees, X, Y) with ' ...
           'fitcknn(X, Y, ''NumNeighbors'', 5, ''Standardize'', true): MATLAB''s ' ...
           'k-nearest-neighbour classifier, which physiojudge provides on Octave; its ' ...
           'model is used as a TreeBagger''s is ([label, score] = model.predict(X), ' ...
           'labels as a cell array of character vectors), so nothing else changes. ' ...
           'Or svmtrain/svmpredict (libsvm, in the statistics package)'];
    case {'fitcsvm', 'fitcecoc', 'fitcnb', 'fitcdiscr'}
      a = ['fitcknn(X, Y, ''NumNeighbors'', 5, ''Standardize'', true) (physiojudge''s, ' ...
           'used as MATLAB''s classifiers are: model.predict(X)), or svmtrain and ' ...
           'svmpredict (libsvm, in the statistics package)'];
    case 'knnsearch'
      a = 'pdist2 (statistics package) and sort: nearest neighbours in a few lines';
    case {'glmfit', 'fitglm', 'mnrfit'}
      a = 'fitlm (statistics package), or fminunc on your own logistic loss';
    case {'readtable', 'readmatrix'}
      a = 'csvread, dlmread, textscan or fileread';
    case {'writetable', 'writematrix'}
      a = 'csvwrite, dlmwrite or fprintf';
    case 'strings'
      a = 'character vectors and cellstr (Octave 7 has no string class)';
    case 'contains'
      a = '~isempty(strfind(s, pattern)) or any(regexp(...))';
    case 'spectrogram'
      a = 'specgram (signal package)';
    case 'histcounts'
      a = 'histc';
    case 'normalize'
      a = 'zscore (statistics package)';
    case 'bandpower'
      a = 'pwelch (signal package) and a sum over the band';
    case 'datetime'
      a = 'datenum, datestr and clock';
    otherwise
      a = '';
  end
end
