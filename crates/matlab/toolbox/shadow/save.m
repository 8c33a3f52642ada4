function varargout = save(varargin)
% SAVE  Octave's save, except MATLAB's -v7.3 (HDF5 MAT files, which Octave 7 cannot
% write): such a file is written as a MAT version 7 file instead, which MATLAB, scipy
% and Octave's load all read, so an entry that saves its model with -v7.3 and loads it
% back (as the official PhysioNet 2022 example does) works. Every other call is Octave's
% own save, run in the caller's workspace (where the variables to save are).

  args = varargin;
  for k = 1:numel(args)
    if ~ischar(args{k})
      error('save: every argument must be a character vector (a file, variable or option)');
    end
    if any(strcmpi(args{k}, {'-v7.3', '-7.3'}))
      args{k} = '-v7';
    end
  end
  quoted = cellfun(@(a) ['''' strrep(a, '''', '''''') ''''], args, 'UniformOutput', false);
  call = ['builtin(''save''' sprintf(', %s', quoted{:}) ')'];
  if nargout > 0
    varargout{1} = evalin('caller', call);
  else
    evalin('caller', call);
  end
end
