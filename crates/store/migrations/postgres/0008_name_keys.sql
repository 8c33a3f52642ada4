-- Names people cannot confuse (docs/service.md, "Names"): each user and team keeps the
-- key its name is compared by (NFKC, case folding, NFKC: store::name_key), unique over
-- all users and, for teams, within a challenge. The same text as SQLite's 0008.
--
-- SQL cannot normalise Unicode, so the keys of rows stored before this migration are
-- filled by the store right after it (store::migrate, fill_name_keys): in order of
-- creation, and a row whose key an earlier one holds gets its id appended, so the
-- migration never fails and the older name keeps its place. NULL keys do not collide
-- (both dialects treat NULLs as distinct in a unique index) until they are filled.
-- (Not `users_name_key`: PostgreSQL gave that name to the UNIQUE of `users.name`.)

ALTER TABLE users ADD COLUMN name_key TEXT;
CREATE UNIQUE INDEX users_by_name_key ON users (name_key);
ALTER TABLE teams ADD COLUMN name_key TEXT;
CREATE UNIQUE INDEX teams_by_name_key ON teams (challenge_id, name_key);
