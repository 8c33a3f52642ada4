function Result(sample_name, sample_path, save_path)
% RESULT  The CPSC 2021 MATLAB entry's main function: for each record named in the file
% SAMPLE_NAME (one a line), its episodes from challenge(), saved as
% SAVE_PATH/<record>.mat holding predict_endpoints. SAMPLE_PATH and SAVE_PATH end in a
% folder separator, as the organisers' scripts gave them.
  names = strtrim(strsplit(fileread(sample_name), sprintf('\n')));
  names = names(~cellfun(@isempty, names));
  for i = 1:numel(names)
    predict_endpoints = challenge([sample_path, names{i}]); %#ok<NASGU>
    save([save_path, names{i}, '.mat'], 'predict_endpoints');
  end
end
