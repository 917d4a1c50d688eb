DROP TRIGGER releases_notify_reads_del ON releases;
DROP TRIGGER releases_notify_reads_upd ON releases;
DROP TRIGGER drafts_notify_reads_del ON drafts;
DROP TRIGGER drafts_notify_reads_upd ON drafts;
DROP TRIGGER drafts_notify_reads_ins ON drafts;
