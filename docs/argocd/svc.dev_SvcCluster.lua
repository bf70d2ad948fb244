-- Argo CD health check of svc.dev/SvcCluster (argocd-cm: resource.customizations.health.svc.dev_SvcCluster).
-- Reads the operator's kstatus conditions: Stalled True is Degraded (a person must act), Ready True is Healthy,
-- anything else (creating, upgrading, scaling, a member recovering) is Progressing; a spec the operator has not
-- seen yet (status.observedGeneration behind metadata.generation) is Progressing too.
hs = {}
if obj.status == nil or obj.status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for svc-operator to report status"
  return hs
end
if obj.metadata.generation ~= nil and obj.status.observedGeneration ~= nil and obj.status.observedGeneration < obj.metadata.generation then
  hs.status = "Progressing"
  hs.message = "Waiting for svc-operator to act on generation " .. obj.metadata.generation
  return hs
end
local ready = nil
local stalled = nil
local reconciling = nil
for _, c in ipairs(obj.status.conditions) do
  if c.type == "Ready" then ready = c end
  if c.type == "Stalled" then stalled = c end
  if c.type == "Reconciling" then reconciling = c end
end
if stalled ~= nil and stalled.status == "True" then
  hs.status = "Degraded"
  hs.message = stalled.reason .. ": " .. (stalled.message or "")
  return hs
end
if ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = ready.message or "Ready"
  return hs
end
if obj.status.phase == "Degraded" then
  hs.status = "Degraded"
  hs.message = (ready ~= nil and ready.message) or "members unhealthy"
  return hs
end
hs.status = "Progressing"
if reconciling ~= nil and reconciling.status == "True" then
  hs.message = reconciling.reason .. ": " .. (reconciling.message or "")
elseif ready ~= nil then
  hs.message = ready.message or ""
else
  hs.message = "phase " .. (obj.status.phase or "unknown")
end
return hs
