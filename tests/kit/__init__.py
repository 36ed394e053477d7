"""The test kit: helpers the tests share. ``tests.kit.modelserver`` is a scripted model server
for the real coding-agent CLIs; ``tests.kit.agentclis`` finds those CLIs (installed by
``npm ci`` from the repository's package.json)."""
