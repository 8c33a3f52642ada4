-- The ranking numbers of a result, per split (docs/service.md, "Scores and leaderboards"):
-- a phase ranks by the figures of its scored split, so a result keeps the quiz's and
-- the exam's. Figures stored before this migration were the exam's (workers reported
-- only those). The same schema as SQLite's 0005, which has to make the table again.
ALTER TABLE result_figures ADD COLUMN split TEXT NOT NULL DEFAULT 'exam'
    CHECK (split IN ('quiz', 'exam'));
ALTER TABLE result_figures ALTER COLUMN split DROP DEFAULT;
ALTER TABLE result_figures DROP CONSTRAINT result_figures_pkey;
ALTER TABLE result_figures DROP CONSTRAINT result_figures_result_id_key_key;
ALTER TABLE result_figures ADD PRIMARY KEY (result_id, split, position);
ALTER TABLE result_figures ADD CONSTRAINT result_figures_result_id_split_key_key
    UNIQUE (result_id, split, key);
