-- Upgrade of schema version 29 to 30: whether a forwarding target receives Apple's notifications about subscribers
-- forgotten on request (apps[].forwarding[].forwardForgotten). The receiver is often the team's own entitlement
-- system, and a forgotten subscriber may still be paying: true (the default) forwards Apple's complete body and keeps
-- nothing of it afterwards; false forwards nothing about them.
-- reclaim-additive: yes
-- (Additive: a column with a default; version 29's binaries do not name it, and their targets forward as before.)
--
-- reclaim-schema-version: 30

ALTER TABLE reclaim.outbound_targets ADD COLUMN forward_forgotten boolean NOT NULL DEFAULT true;
COMMENT ON COLUMN reclaim.outbound_targets.forward_forgotten IS 'For forwarding: whether notifications about subscribers forgotten on request (reclaim subscribers forget) go there, their complete body, kept only until sent (true), or none of them (false). apps[].forwarding[].forwardForgotten.';
