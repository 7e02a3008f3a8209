import { z } from 'zod';
import {
  reconciliationListQuery,
  reconciliationRequest,
  reconciliationRun,
  reconciliationRunPage,
} from './custody';
import {
  createdKeyResponse,
  createKeyInput,
  createTenantInput,
  gasStationResponse,
  keyRevokedResponse,
  tenantAssetList,
  tenantAssetResponse,
  tenantResponse,
} from './custody-operator';
import { withdrawalPolicyInput, withdrawalPolicyView } from './custody-policies';
import { named, okResponse as ok, type RouteSpec } from './openapi-builder';

/**
 * The custody operator API in the custody document (docs/openapi.md): `/admin`, tag `operator`, bearer
 * ADMIN_TOKEN. With ADMIN_TOKEN unset every route answers 404. Its own responses (OperatorUnauthorized,
 * OperatorTooManyRequests) are registered with the others in custody-api.openapi.ts.
 */

type Route = Omit<RouteSpec, 'security' | 'tags' | 'responses'> & { responses: RouteSpec['responses'] };

/** One operator operation: the token, and the answers every operator call can give. */
const operator = (route: Route): RouteSpec => ({
  ...route,
  tags: ['operator'],
  security: ['operator'],
  responses: {
    ...route.responses,
    401: 'OperatorUnauthorized',
    404: route.responses[404] ?? 'NotFound',
    429: 'OperatorTooManyRequests',
    500: 'ServerError',
  },
});

const tenantPath = z.object({ tenantId: z.string().uuid() });
const assetPath = tenantPath.extend({
  assetId: z.string().describe('The asset id, or its symbol (`BTC`, `USDT_ERC20`, …)'),
});
const policyPath = tenantPath.extend({ environment: z.enum(['test', 'live']) });
const policy = ok('The policy', 'WithdrawalPolicy', withdrawalPolicyView);
const run = ok('The run and its findings', 'ReconciliationRun', reconciliationRun);

export const CUSTODY_OPERATOR_ROUTES: RouteSpec[] = [
  operator({
    method: 'post',
    path: '/admin/tenants',
    operationId: 'adminCreateTenant',
    summary: 'Create a tenant (with its own HD seed)',
    body: { schema: named('TenantCreate', createTenantInput) },
    responses: { 201: ok('The tenant', 'Tenant', tenantResponse), 400: 'BadRequest' },
  }),
  operator({
    method: 'post',
    path: '/admin/tenants/{tenantId}/keys',
    operationId: 'adminCreateKey',
    summary: 'Issue an API key and its secret (shown only here)',
    description:
      'A live key cannot carry `sandbox:write`. The secret is returned once and never again; store it now.',
    params: { path: tenantPath },
    body: { schema: named('KeyCreate', createKeyInput) },
    responses: {
      201: ok('The key and its secret', 'CreatedKey', createdKeyResponse),
      400: 'BadRequest',
      404: 'NotFound',
    },
  }),
  operator({
    method: 'post',
    path: '/admin/keys/{apiKey}/revoke',
    operationId: 'adminRevokeKey',
    summary: 'Revoke an API key (every replica refuses it at once)',
    params: { path: z.object({ apiKey: z.string() }) },
    responses: { 200: ok('Revoked', 'KeyRevoked', keyRevokedResponse), 404: 'NotFound' },
  }),
  operator({
    method: 'get',
    path: '/admin/tenants/{tenantId}/gas-station',
    operationId: 'adminGetGasStation',
    summary: "The tenant's EVM gas station, to fund with ETH",
    params: { path: tenantPath },
    responses: { 200: ok('The gas station', 'GasStation', gasStationResponse), 404: 'NotFound' },
  }),
  operator({
    method: 'get',
    path: '/admin/tenants/{tenantId}/assets',
    operationId: 'adminListTenantAssets',
    summary: 'Every asset as the tenant has it (enabled or disabled)',
    params: { path: tenantPath },
    responses: { 200: ok('The assets', 'TenantAssetList', tenantAssetList), 404: 'NotFound' },
  }),
  ...(['enable', 'disable'] as const).map((action) =>
    operator({
      method: 'post',
      path: `/admin/tenants/{tenantId}/assets/{assetId}/${action}`,
      operationId: action === 'enable' ? 'adminEnableAsset' : 'adminDisableAsset',
      summary: `${action === 'enable' ? 'Enable' : 'Disable'} an asset for the tenant`,
      params: { path: assetPath },
      responses: {
        200: ok("The tenant's view of the asset", 'TenantAsset', tenantAssetResponse),
        404: 'NotFound',
      },
    }),
  ),
  operator({
    method: 'get',
    path: '/admin/tenants/{tenantId}/policies/{environment}',
    operationId: 'adminGetWithdrawalPolicy',
    summary: "The tenant's withdrawal policy in one environment (version 0: none set)",
    params: { path: policyPath },
    responses: { 200: policy, 400: 'BadRequest', 404: 'NotFound' },
  }),
  operator({
    method: 'put',
    path: '/admin/tenants/{tenantId}/policies/{environment}',
    operationId: 'adminSetWithdrawalPolicy',
    summary: "Replace the tenant's withdrawal policy in one environment",
    params: { path: policyPath },
    body: { schema: named('WithdrawalPolicyInput', withdrawalPolicyInput) },
    responses: { 200: policy, 400: 'BadRequest', 404: 'NotFound' },
  }),
  operator({
    method: 'post',
    path: '/admin/reconciliations',
    operationId: 'adminStartReconciliation',
    summary: 'Reconcile now (one tenant, or every tenant) and answer the report',
    body: { schema: named('ReconciliationRequest', reconciliationRequest) },
    responses: { 201: run, 400: 'BadRequest' },
  }),
  operator({
    method: 'get',
    path: '/admin/reconciliations',
    operationId: 'adminListReconciliations',
    summary: 'The latest reconciliation runs, newest first',
    params: { query: reconciliationListQuery },
    responses: {
      200: ok('A page of runs', 'ReconciliationRunPage', reconciliationRunPage),
      400: 'BadRequest',
    },
  }),
  operator({
    method: 'get',
    path: '/admin/reconciliations/{id}',
    operationId: 'adminGetReconciliation',
    summary: 'One reconciliation run and its findings',
    params: { path: z.object({ id: z.string().uuid() }) },
    responses: { 200: run, 404: 'NotFound' },
  }),
];
