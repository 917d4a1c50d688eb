DROP TABLE hyperlinks;
DROP TABLE versions;
DROP TABLE drafts;
DROP TABLE revisions;
DROP TABLE content_blocks;
DROP TABLE contents;
DROP TABLE pages;
