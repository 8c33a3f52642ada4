% physiojudge's runner for MATLAB-language code on GNU Octave (docs/matlab.md), run by
% the `matlab` and `mcc` shims and by the judge's MATLAB layouts:
%   octave-cli ... physiojudge_run.m batch|r|stdin "CMD"   evaluates CMD
%   octave-cli ... physiojudge_run.m call FUNCTION ARGS...  calls FUNCTION(ARGS{:}), the
%                                                           arguments as character vectors
% Exit status: 0, or exit(n)'s n, or 1 after an error, which is reported by
% physiojudge_report (a function Octave lacks is named with its file and line).
% Variables here live in the base workspace CMD runs in: their names are physiojudge's.
physiojudge__args = argv();
more off;
% MATLAB's signal-processing and statistics functions are there without a `pkg load`
% (the statistics package's replacements of mean, median, std, var are announced in
% warnings that would fill every log).
warning('off', 'Octave:shadowed-function');
pkg load signal statistics
% Our stand-ins for Octave built-ins (save with -v7.3), added now that the warning
% that they shadow one is off.
addpath(fullfile(fileparts(mfilename('fullpath')), 'shadow'));
% MAT files as MATLAB writes them (version 7), not Octave's own text format: the judge,
% a participant's MATLAB and scipy can all read them.
save_default_options('-mat7-binary');
physiojudge__path = getenv('PHYSIOJUDGE_PATH');
if ~isempty(physiojudge__path)
  physiojudge__dirs = strsplit(physiojudge__path, ':');
  addpath(physiojudge__dirs{end:-1:1});
  clear physiojudge__dirs;
end
clear physiojudge__path;
if numel(physiojudge__args) < 2
  fprintf(stderr, 'physiojudge_run: expected a mode and a command\n');
  exit(2);
end
try
  switch physiojudge__args{1}
    case {'batch', 'r', 'stdin'}
      eval(physiojudge__args{2});
    case 'call'
      feval(physiojudge__args{2}, physiojudge__args{3:end});
    otherwise
      fprintf(stderr, 'physiojudge_run: unknown mode %s\n', physiojudge__args{1});
      exit(2);
  end
catch physiojudge__err
  physiojudge_report(physiojudge__err);
  exit(1);
end
exit(0);
