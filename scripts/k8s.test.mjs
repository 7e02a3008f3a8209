// deploy/k8s: renders every kustomize overlay with `kubectl kustomize` and validates each object against the
// Kubernetes schemas (kubernetes-models, and the Prometheus Operator models for the ServiceMonitor), then checks
// the rules the platform team relies on: probes and resources on every workload, a PDB and an HPA per partner
// API, media-store reachable only from verification, secrets referenced and never shipped in prod.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const overlaysDir = join(root, 'deploy/k8s/overlays');
const overlays = readdirSync(overlaysDir).sort();
const kubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' });
const skip = kubectl.status === 0 ? false : 'kubectl (with its built-in kustomize) is not installed';
const PARTNER_APIS = ['verification-api', 'custody-api'];

function render(overlay) {
  const out = spawnSync('kubectl', ['kustomize', join(overlaysDir, overlay)], { encoding: 'utf8' });
  assert.equal(out.status, 0, `kubectl kustomize ${overlay} failed:\n${out.stderr}`);
  return parseAllDocuments(out.stdout).map((doc) => doc.toJS());
}

/** The model class for an object: kubernetes-models for the core API groups, prometheus-operator for CRDs. */
async function modelOf({ apiVersion, kind }) {
  const pkg = apiVersion.startsWith('monitoring.coreos.com/')
    ? '@kubernetes-models/prometheus-operator'
    : 'kubernetes-models';
  const module = await import(`${pkg}/${apiVersion}/${kind}`);
  return module[kind];
}

async function validate(object) {
  const Model = await modelOf(object);
  new Model(object).validate();
}

const byKind = (objects, kind) => objects.filter((o) => o.kind === kind);

test('the validator refuses an invalid object', { skip }, async () => {
  const broken = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'x' },
    spec: { replicas: 'two' },
  };
  await assert.rejects(validate(broken), /replicas must be integer/);
});

for (const overlay of overlays) {
  describe(`overlay ${overlay}`, { skip }, () => {
    const objects = skip ? [] : render(overlay);

    test('every object is valid against the Kubernetes schemas', async () => {
      assert.ok(objects.length > 10, `only ${objects.length} objects rendered`);
      for (const object of objects) {
        await assert.doesNotReject(validate(object), `${object.kind}/${object.metadata.name}`);
      }
    });

    test('every workload has /health probes and resource requests and limits', () => {
      const workloads = byKind(objects, 'Deployment');
      assert.ok(workloads.length >= 5);
      for (const deployment of workloads) {
        for (const container of deployment.spec.template.spec.containers) {
          for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe']) {
            assert.equal(container[probe]?.httpGet?.path, '/health', `${deployment.metadata.name} ${probe}`);
          }
          assert.ok(container.resources?.requests?.cpu && container.resources?.limits?.memory);
        }
      }
    });

    test('each partner API has a PodDisruptionBudget and a HorizontalPodAutoscaler', () => {
      for (const api of PARTNER_APIS) {
        const pdb = byKind(objects, 'PodDisruptionBudget').find(
          (p) => p.spec.selector.matchLabels['app.kubernetes.io/name'] === api,
        );
        const hpa = byKind(objects, 'HorizontalPodAutoscaler').find(
          (h) => h.spec.scaleTargetRef.name === api,
        );
        assert.ok(pdb, `no PDB for ${api}`);
        assert.ok(hpa && hpa.spec.minReplicas >= 1 && hpa.spec.maxReplicas >= hpa.spec.minReplicas);
      }
    });

    test('media-store is reachable only from verification-api and its worker', () => {
      const policies = byKind(objects, 'NetworkPolicy');
      assert.ok(policies.some((p) => Object.keys(p.spec.podSelector).length === 0 && !p.spec.ingress));
      const media = policies.find(
        (p) => p.spec.podSelector.matchLabels?.['app.kubernetes.io/name'] === 'media-store',
      );
      const sources = media.spec.ingress.flatMap((rule) =>
        rule.from.flatMap((peer) => peer.podSelector.matchExpressions.flatMap((e) => e.values)),
      );
      assert.deepEqual(sources.sort(), ['verification-api', 'verification-worker']);
    });

    test('secrets are referenced by name; only the dev overlay generates them', () => {
      const referenced = new Set(
        byKind(objects, 'Deployment')
          .flatMap((d) => d.spec.template.spec.containers)
          .flatMap((c) => c.envFrom ?? [])
          .flatMap((e) => (e.secretRef ? [e.secretRef.name] : [])),
      );
      assert.deepEqual([...referenced].sort(), ['media-store-s3', 'tessera-secrets']);
      const shipped = byKind(objects, 'Secret').map((s) => s.metadata.name);
      if (overlay === 'prod') assert.deepEqual(shipped, []);
      else assert.deepEqual(shipped.sort(), [...referenced].sort());
    });

    test('a ServiceMonitor scrapes /metrics on every Service', () => {
      const [monitor] = byKind(objects, 'ServiceMonitor');
      assert.equal(monitor.spec.endpoints[0].path, '/metrics');
      // The apps answer /metrics only with the bearer METRICS_TOKEN (decision 0012): Prometheus sends the pods' own.
      assert.deepEqual(monitor.spec.endpoints[0].authorization, {
        type: 'Bearer',
        credentials: { name: 'tessera-secrets', key: 'METRICS_TOKEN' },
      });
      if (overlay === 'dev') {
        const [secret] = byKind(objects, 'Secret').filter((s) => s.metadata.name === 'tessera-secrets');
        assert.ok(
          secret.data?.METRICS_TOKEN ?? secret.stringData?.METRICS_TOKEN,
          'dev secret has METRICS_TOKEN',
        );
      }
      for (const service of byKind(objects, 'Service')) {
        assert.equal(service.metadata.labels['app.kubernetes.io/part-of'], 'tessera');
        assert.ok(
          service.spec.ports.some((p) => p.name === 'http'),
          service.metadata.name,
        );
      }
    });
  });
}
