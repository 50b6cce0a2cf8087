-- Upgrade of schema version 23 to 24: what reclaim messaging apply uploaded to Apple, per app, environment and id,
-- with a hash of its content, so that a changed text under an uploaded id is refused and a lost answer is not an error.
-- reclaim-additive: yes
-- (Additive: a new table; version 23's binaries neither read nor write it.)
--
-- reclaim-schema-version: 24

CREATE TABLE reclaim.messaging_uploads (
    bundle_id    text        NOT NULL,
    environment  text        NOT NULL,
    kind         text        NOT NULL CHECK (kind IN ('message', 'image')),
    id           text        NOT NULL,
    sha256       text        NOT NULL,
    uploaded_at  timestamptz,
    attempted_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (bundle_id, environment, kind, id)
);
COMMENT ON TABLE reclaim.messaging_uploads IS 'Every Retention Messaging message and image reclaim messaging apply uploaded (or tried to), per app and environment: Apple has no update (a message or image is uploaded once under its id) and its lists give ids and review states only, so the hash kept here is how a changed text under an uploaded id is caught.';
COMMENT ON COLUMN reclaim.messaging_uploads.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.messaging_uploads.environment IS 'Production or Sandbox: Apple keeps each apart.';
COMMENT ON COLUMN reclaim.messaging_uploads.kind IS 'message or image.';
COMMENT ON COLUMN reclaim.messaging_uploads.id IS 'The message or image identifier (a UUID, lowercase).';
COMMENT ON COLUMN reclaim.messaging_uploads.sha256 IS 'SHA-256 (hex) of what was sent: the message body as JSON with sorted keys, or the PNG and its size.';
COMMENT ON COLUMN reclaim.messaging_uploads.uploaded_at IS 'When Apple accepted it (2xx, or 409 for this same content after a lost answer); NULL: tried, not known to have landed.';
COMMENT ON COLUMN reclaim.messaging_uploads.attempted_at IS 'The latest attempt.';
