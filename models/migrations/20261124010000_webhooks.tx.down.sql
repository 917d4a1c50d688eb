DROP TABLE webhook_deliveries;
DROP TABLE webhook_events;
DROP TABLE webhooks;
