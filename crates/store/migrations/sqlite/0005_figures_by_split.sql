-- The ranking numbers of a result, per split (docs/service.md, "Scores and leaderboards"):
-- a phase ranks by the figures of its scored split, so a result keeps the quiz's and
-- the exam's. Figures stored before this migration were the exam's (workers reported
-- only those). SQLite cannot change a primary key in place: the table is made again
-- and its rows copied. Nothing refers to result_figures.
CREATE TABLE result_figures_by_split (
    result_id TEXT NOT NULL REFERENCES results (id),
    split     TEXT NOT NULL CHECK (split IN ('quiz', 'exam')),
    position  BIGINT NOT NULL CHECK (position >= 0),
    key       TEXT NOT NULL,
    value     DOUBLE PRECISION,
    better    TEXT NOT NULL CHECK (better IN ('higher', 'lower')),
    PRIMARY KEY (result_id, split, position),
    UNIQUE (result_id, split, key)
);

INSERT INTO result_figures_by_split (result_id, split, position, key, value, better)
SELECT result_id, 'exam', position, key, value, better FROM result_figures;

DROP TABLE result_figures;

ALTER TABLE result_figures_by_split RENAME TO result_figures;
