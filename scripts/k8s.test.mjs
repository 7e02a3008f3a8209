// deploy/k8s: renders every kustomize overlay with `kubectl kustomize` and validates each object against the
// Kubernetes schemas (kubernetes-models, and the Prometheus Operator models for the ServiceMonitor), then checks
// the rules the platform team relies on: probes and resources on every workload, a PDB and an HPA per partner
// API, media-store reachable only from verification, the partner APIs' port reachable only from the Ingress
// controller's namespace (and Prometheus), which alone may set the X-Forwarded-For that TRUSTED_PROXIES believes,
// secrets referenced and never shipped in prod, both custody processes on the same CHAIN_EVM_* settings, and
// TRUSTED_PROXIES set for the partner APIs behind the Ingress, with every partner API's and custody process's
// environment parsed by the app's own schema (built dist/).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
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
/**
 * The namespace of the Ingress controller each overlay admits to the partner APIs' port (decision 0471): the one
 * value an operator changes, in the overlay's patch of the NetworkPolicy `partner-apis`.
 */
const INGRESS_NAMESPACE = { dev: 'ingress-nginx', prod: 'ingress-nginx' };
/**
 * Prometheus scrapes /metrics on every pod's http port, the partner APIs' too (prometheus-scrape): only its server
 * pods, by the label the Prometheus Operator sets, in the monitoring namespace (decision 0480).
 */
const PROMETHEUS_SOURCE = 'namespace monitoring pods {"matchLabels":{"app.kubernetes.io/name":"prometheus"}}';
/** The two custody processes (same image, API and worker entry points): one chain, the same settings (decision 0453). */
const CUSTODY_PROCESSES = ['custody-api', 'custody-worker'];
/** The Secret that holds CHAIN_EVM_RPC_URL (a hosted node's URL carries its API key); prod creates it. */
const CHAIN_SECRET = 'custody-chain';
/** Stand-ins for the Secrets the prod overlay references and never ships (by name), to parse its environment. */
const SECRET_STAND_INS = {
  'tessera-secrets': {
    DATABASE_URL: 'postgres://tessera@db:5432/tessera',
    ADMIN_TOKEN: 'stand-in-admin-token-0123456789',
    SECRETS_MASTER_KEY: Buffer.alloc(32, 1).toString('base64'),
    INTERNAL_SERVICE_TOKEN: 'stand-in-internal-token-0123456789',
    METRICS_TOKEN: 'stand-in-metrics-token-0123456789',
  },
  [CHAIN_SECRET]: { CHAIN_EVM_RPC_URL: 'https://ethereum-node.example.com/v2/stand-in-key' },
  'media-store-s3': { S3_ACCESS_KEY_ID: 'stand-in', S3_SECRET_ACCESS_KEY: 'stand-in-secret' },
};
/** Each app's env schema and the allow-list parser, as the built apps run them. */
const require = createRequire(import.meta.url);
const built = (path) => {
  const file = join(root, path);
  assert.ok(existsSync(file), `${path} is missing: run pnpm build first`);
  return require(file);
};
const ENV_LOADERS = {
  'verification-api': () => built('apps/verification-api/dist/config/env.js').loadEnv,
  'custody-api': () => built('apps/custody-api/dist/config/env.js').loadEnv,
};

function render(overlay) {
  const out = spawnSync('kubectl', ['kustomize', join(overlaysDir, overlay)], { encoding: 'utf8' });
  assert.equal(out.status, 0, `kubectl kustomize ${overlay} failed:\n${out.stderr}`);
  // kubectl reads `0x…` (an EVM address in a ConfigMap) as a string, as it overflows a Go integer; YAML 1.2's hex
  // integers would make it a number here, so that one tag is left out. Manifests never write an integer in hex.
  const customTags = (tags) => tags.filter((tag) => tag.format !== 'HEX');
  return parseAllDocuments(out.stdout, { customTags }).map((doc) => doc.toJS());
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
const deployment = (objects, name) => byKind(objects, 'Deployment').find((d) => d.metadata.name === name);

/**
 * A container's environment as the kubelet assembles it: envFrom in order, then env. Values come from the
 * rendered ConfigMaps and Secrets; a Secret the overlay does not ship contributes nothing but its name.
 */
function environmentOf(objects, container) {
  const values = {};
  const from = {};
  const unshipped = [];
  for (const source of container.envFrom ?? []) {
    const ref = source.configMapRef ?? source.secretRef;
    const kind = source.configMapRef ? 'ConfigMap' : 'Secret';
    const object = byKind(objects, kind).find((o) => o.metadata.name === ref.name);
    if (!object) {
      unshipped.push(ref.name);
      continue;
    }
    const data =
      kind === 'Secret'
        ? Object.fromEntries(
            Object.entries(object.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
          )
        : (object.data ?? {});
    for (const [key, value] of Object.entries({ ...data, ...(object.stringData ?? {}) })) {
      values[key] = value;
      from[key] = `${kind}/${ref.name}`;
    }
  }
  for (const { name, value } of container.env ?? []) {
    values[name] = value;
    from[name] = 'env';
  }
  return { values, from, unshipped };
}

/** Whether a label selector (matchLabels and matchExpressions; empty: everything) selects these labels. */
function selects(selector, labels) {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {}))
    if (labels[key] !== value) return false;
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, key);
    if (operator === 'In' && !(has && values.includes(labels[key]))) return false;
    if (operator === 'NotIn' && has && values.includes(labels[key])) return false;
    if (operator === 'Exists' && !has) return false;
    if (operator === 'DoesNotExist' && has) return false;
  }
  return true;
}

const isEmptySelector = (selector) =>
  Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0;

/**
 * The sources admitted to a workload's `http` port, one text per peer of every NetworkPolicy ingress rule that
 * selects its pods and covers that port: `namespace NAME` (a namespaceSelector on the name label the control
 * plane sets), `ANY SOURCE` (a rule without `from`, an empty namespaceSelector, an ipBlock /0), or the peer as
 * JSON. Prefixed with the policy's name.
 */
function sourcesOfHttpPort(objects, name) {
  const template = deployment(objects, name).spec.template;
  const labels = template.metadata.labels;
  const port = template.spec.containers[0].ports.find((p) => p.name === 'http');
  const coversPort = (rule) =>
    !rule.ports ||
    rule.ports.some(
      (p) =>
        p.port === undefined ||
        p.port === 'http' ||
        p.port === port.containerPort ||
        (p.endPort !== undefined && p.port <= port.containerPort && port.containerPort <= p.endPort),
    );
  const peer = (p) => {
    if (p.ipBlock)
      return p.ipBlock.cidr.endsWith('/0') ? 'ANY SOURCE' : `ipBlock ${JSON.stringify(p.ipBlock)}`;
    if (!p.namespaceSelector) return `pods of this namespace ${JSON.stringify(p.podSelector)}`;
    if (isEmptySelector(p.namespaceSelector)) return 'ANY SOURCE';
    const { matchLabels = {}, matchExpressions = [] } = p.namespaceSelector;
    const named = matchLabels['kubernetes.io/metadata.name'];
    const simple = named && Object.keys(matchLabels).length === 1 && matchExpressions.length === 0;
    const pods =
      p.podSelector && !isEmptySelector(p.podSelector) ? ` pods ${JSON.stringify(p.podSelector)}` : '';
    return simple ? `namespace ${named}${pods}` : JSON.stringify(p);
  };
  return byKind(objects, 'NetworkPolicy')
    .filter((policy) => selects(policy.spec.podSelector, labels))
    .filter((policy) => (policy.spec.policyTypes ?? ['Ingress']).includes('Ingress'))
    .flatMap((policy) =>
      (policy.spec.ingress ?? [])
        .filter(coversPort)
        .flatMap((rule) => (rule.from?.length ? rule.from.map(peer) : ['ANY SOURCE']))
        .map((source) => `${policy.metadata.name}: ${source}`),
    )
    .sort();
}

const chainSettings = ({ values, from }) =>
  Object.fromEntries(
    Object.keys(values)
      .filter((k) => k.startsWith('CHAIN_EVM_'))
      .sort()
      .map((k) => [k, { value: values[k], from: from[k] }]),
  );

test('the validator refuses an invalid object', { skip }, async () => {
  const broken = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'x' },
    spec: { replicas: 'two' },
  };
  await assert.rejects(validate(broken), /replicas must be integer/);
});

test('the NetworkPolicy reader names every source that opens a port to anyone', () => {
  const labels = { 'app.kubernetes.io/name': 'custody-api' };
  const objects = (...ingress) => [
    {
      kind: 'Deployment',
      metadata: { name: 'custody-api' },
      spec: {
        template: {
          metadata: { labels },
          spec: { containers: [{ ports: [{ name: 'http', containerPort: 3002 }] }] },
        },
      },
    },
    ...ingress.map((rule, i) => ({
      kind: 'NetworkPolicy',
      metadata: { name: `p${i}` },
      spec: { podSelector: { matchLabels: labels }, ingress: [rule] },
    })),
  ];
  const ns = (name) => ({ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': name } } });
  assert.deepEqual(
    sourcesOfHttpPort(
      objects(
        { ports: [{ port: 'http' }] },
        { from: [], ports: [{ port: 3002 }] },
        { from: [{ namespaceSelector: {} }] },
        { from: [{ ipBlock: { cidr: '0.0.0.0/0' } }], ports: [{ port: 3000, endPort: 3005 }] },
        { from: [ns('ingress-nginx')], ports: [{ port: 'http' }] },
        { from: [ns('elsewhere')], ports: [{ port: 'metrics' }] },
      ),
      'custody-api',
    ),
    ['p0: ANY SOURCE', 'p1: ANY SOURCE', 'p2: ANY SOURCE', 'p3: ANY SOURCE', 'p4: namespace ingress-nginx'],
  );
  // A policy for other pods does not count.
  const other = objects({ from: [] });
  other[1].spec.podSelector = {
    matchExpressions: [{ key: 'app.kubernetes.io/name', operator: 'In', values: ['x'] }],
  };
  assert.deepEqual(sourcesOfHttpPort(other, 'custody-api'), []);
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

    test("the partner APIs' port admits the Ingress controller's namespace and Prometheus, nothing else", () => {
      const ingressNamespace = INGRESS_NAMESPACE[overlay];
      assert.ok(ingressNamespace, `INGRESS_NAMESPACE names no Ingress namespace for overlay ${overlay}`);
      for (const api of PARTNER_APIS) {
        assert.deepEqual(
          sourcesOfHttpPort(objects, api),
          [`partner-apis: namespace ${ingressNamespace}`, `prometheus-scrape: ${PROMETHEUS_SOURCE}`],
          `${api}: the sources admitted to its http port`,
        );
      }
      const [partnerApis] = byKind(objects, 'NetworkPolicy').filter(
        (p) => p.metadata.name === 'partner-apis',
      );
      assert.deepEqual(partnerApis.spec.ingress, [
        {
          from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ingressNamespace } } }],
          ports: [{ port: 'http', protocol: 'TCP' }],
        },
      ]);
    });

    test('no NetworkPolicy admits every source to any Tessera port', () => {
      for (const workload of byKind(objects, 'Deployment')) {
        const open = sourcesOfHttpPort(objects, workload.metadata.name).filter((s) =>
          s.endsWith('ANY SOURCE'),
        );
        assert.deepEqual(open, [], `${workload.metadata.name}: admitted from every source`);
      }
    });

    test('no Tessera workload calls a partner API over HTTP (the policies admit none of them there)', () => {
      const containers = [...byKind(objects, 'Deployment'), ...byKind(objects, 'Job')].flatMap((w) =>
        w.spec.template.spec.containers.map((c) => [w.metadata.name, c]),
      );
      for (const [workload, container] of containers) {
        for (const [key, value] of Object.entries(environmentOf(objects, container).values)) {
          if (!URL.canParse(value)) continue;
          const host = new URL(value).hostname.split('.')[0];
          assert.ok(!PARTNER_APIS.includes(host), `${workload}: ${key} points at ${host}`);
        }
      }
    });

    test('secrets are referenced by name; only the dev overlay generates them', () => {
      const referenced = new Set(
        byKind(objects, 'Deployment')
          .flatMap((d) => d.spec.template.spec.containers)
          .flatMap((c) => c.envFrom ?? [])
          .flatMap((e) => (e.secretRef ? [e.secretRef.name] : [])),
      );
      assert.deepEqual([...referenced].sort(), [CHAIN_SECRET, 'media-store-s3', 'tessera-secrets']);
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

    test('both custody processes get the same CHAIN_EVM_* settings, the node URL from a Secret', () => {
      const [api, worker] = CUSTODY_PROCESSES.map((name) => {
        const d = deployment(objects, name);
        assert.ok(d, `no Deployment ${name}`);
        return environmentOf(objects, d.spec.template.spec.containers[0]);
      });
      for (const [i, env] of [api, worker].entries()) {
        const name = CUSTODY_PROCESSES[i];
        // The chain id and the USDT contract are plain configuration; the node URL is a Secret's (it may hold a key).
        for (const key of ['CHAIN_EVM_CHAIN_ID', 'CHAIN_EVM_USDT_CONTRACT'])
          assert.match(env.from[key] ?? 'unset', /^ConfigMap\//, `${name}: ${key} from a ConfigMap`);
        if (env.unshipped.includes(CHAIN_SECRET)) assert.equal(env.values.CHAIN_EVM_RPC_URL, undefined);
        else assert.equal(env.from.CHAIN_EVM_RPC_URL, `Secret/${CHAIN_SECRET}`, `${name}: CHAIN_EVM_RPC_URL`);
        assert.ok(
          env.unshipped.includes(CHAIN_SECRET) || env.values.CHAIN_EVM_RPC_URL,
          `${name}: CHAIN_EVM_RPC_URL comes from Secret ${CHAIN_SECRET}`,
        );
      }
      assert.deepEqual(chainSettings(worker), chainSettings(api), "the API has the worker's CHAIN_EVM_*");
      assert.deepEqual(worker.unshipped, api.unshipped);
      // Only the custody processes see the node.
      for (const d of byKind(objects, 'Deployment').filter(
        (d) => !CUSTODY_PROCESSES.includes(d.metadata.name),
      )) {
        const env = environmentOf(objects, d.spec.template.spec.containers[0]);
        assert.deepEqual(chainSettings(env), {}, `${d.metadata.name} has no CHAIN_EVM_*`);
      }
    });

    test('each partner API trusts X-Forwarded-For from the Ingress only (TRUSTED_PROXIES set, same value)', () => {
      // TRUSTED_PROXIES is a range of addresses, and any pod with an address in it is believed: it is safe only
      // while the NetworkPolicies let nothing but named namespaces (the Ingress, Prometheus's pods) open a connection.
      for (const api of PARTNER_APIS) {
        for (const source of sourcesOfHttpPort(objects, api)) {
          assert.match(
            source,
            /^[\w-]+: namespace [\w-]+( pods \{.+\})?$/,
            `${api}: TRUSTED_PROXIES is believed from ${source}`,
          );
        }
      }
      const { IpAllowList, cidrProblem } = built('libs/auth/dist/index.js');
      const values = PARTNER_APIS.map((name) => {
        const { values: env } = environmentOf(
          objects,
          deployment(objects, name).spec.template.spec.containers[0],
        );
        const list = (env.TRUSTED_PROXIES ?? '')
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        assert.ok(list.length > 0, `${name}: TRUSTED_PROXIES is empty, so every client is the Ingress`);
        for (const cidr of list) assert.equal(cidrProblem(cidr), undefined, `${name}: ${cidr}`);
        assert.doesNotThrow(() => new IpAllowList(list));
        return env.TRUSTED_PROXIES;
      });
      assert.equal(
        new Set(values).size,
        1,
        `the partner APIs trust different proxies: ${values.join(' / ')}`,
      );
    });

    test("every partner API's and custody process's environment parses with the app's own schema", () => {
      for (const name of [...PARTNER_APIS, 'verification-worker', 'custody-worker']) {
        const container = deployment(objects, name).spec.template.spec.containers[0];
        const { values, unshipped } = environmentOf(objects, container);
        assert.ok(
          overlay === 'prod' || unshipped.length === 0,
          `${name}: ${unshipped} not shipped in ${overlay}`,
        );
        const loadEnv = ENV_LOADERS[name.replace('-worker', '-api')]();
        const standIns = Object.assign({}, ...unshipped.map((secret) => SECRET_STAND_INS[secret]));
        const env = loadEnv({ ...standIns, ...values });
        if (name.startsWith('custody-')) assert.ok(env.CHAIN_EVM_RPC_URL, `${name}: CHAIN_EVM_RPC_URL`);
      }
    });
  });
}
