// Thread: main
// POST, GET, DELETE /delegation: the user's delegation to this oracle, validated before it is stored.
import { reply } from '../../http/types.js';
import {
  DelegationRevokedSchema,
  DelegationStatusSchema,
  DelegationStoredSchema,
  ErrorBodySchema,
} from './answer-schemas.js';
import { oracleErrors } from '../errors.js';
import { decodeArtifact, revocationKeyOf } from '../auth/index.js';
import { StoreDelegationSchema } from './schemas.js';
import { delegationStatus } from '../identity/delegations.js';
import { AUTH_RESPONSES, route, type OracleRouteDeps } from './deps.js';

const tags = ['Delegation'];

export function delegationRoutes(deps: OracleRouteDeps) {
  const { authenticator, delegations, revocations, oracle } = deps;
  return [
    route({
      method: 'POST',
      path: '/delegation',
      auth: 'ucan',
      summary: 'Store your delegation to this oracle (replaces the previous one)',
      tags,
      body: StoreDelegationSchema,
      responses: {
        200: { description: 'Stored', schema: DelegationStoredSchema },
        400: {
          description:
            'Invalid body, or a delegation that is not yours, not to this oracle, expired or badly signed (`reason`)',
          schema: ErrorBodySchema,
        },
        401: AUTH_RESPONSES[401],
      },
      async handler({ identity: { did }, body }) {
        if (body.issuer !== undefined && body.issuer !== did) {
          throw oracleErrors.delegationRefused(`issuer ${body.issuer} is not the authenticated user ${did}`);
        }
        if (body.audience !== undefined && body.audience !== oracle.oracleDid) {
          throw oracleErrors.delegationRefused(`audience ${body.audience} is not this oracle (${oracle.oracleDid})`);
        }
        // Signatures, chain, audience = this oracle, not expired, issued by the caller.
        const check = await authenticator.verifyDelegationForStorage(body.raw, did);
        if (!check.ok) throw oracleErrors.delegationRefused(check.reason);
        await delegations.put({
          raw: body.raw,
          issuer: check.issuer,
          audience: check.audience,
          ...(check.expiration === undefined ? {} : { expiration: check.expiration }),
          storedAt: new Date().toISOString(),
        });
        return reply.json(
          200,
          check.expiration === undefined ? { ok: true } : { ok: true, expiration: check.expiration },
        );
      },
    }),

    route({
      method: 'GET',
      path: '/delegation',
      auth: 'ucan',
      summary: 'Whether a valid delegation is stored',
      tags,
      responses: {
        200: { description: '`authorized` is false when none is stored or it expired', schema: DelegationStatusSchema },
        401: AUTH_RESPONSES[401],
      },
      async handler({ identity: { did } }) {
        return reply.json(200, delegationStatus(await delegations.get(did)));
      },
    }),

    route({
      method: 'DELETE',
      path: '/delegation',
      auth: 'ucan',
      summary:
        'Revoke your stored delegation (and the one sent with this request): refused from now on, on every transport',
      tags,
      responses: { 200: { description: 'Revoked', schema: DelegationRevokedSchema }, 401: AUTH_RESPONSES[401] },
      async handler({ identity: { did, delegation } }) {
        // Revoked by its signature, not only forgotten: sent again in any encoding (x-ucan-delegation, or as a
        // proof anywhere in an invocation's chain) it is refused.
        const stored = await delegations.get(did);
        // A stored delegation that no longer reads (stored before the canonical-encoding rule) authenticates nobody.
        const storedDelegation = stored ? await decodeArtifact(stored.raw).catch(() => undefined) : undefined;
        if (storedDelegation) await revocations.revoke(revocationKeyOf(storedDelegation), stored!.expiration);
        if (delegation) await revocations.revoke(revocationKeyOf(delegation), finiteOrUndefined(delegation.expiration));
        await delegations.remove(did);
        return reply.json(200, { ok: true });
      },
    }),
  ];
}

const finiteOrUndefined = (seconds: number) => (Number.isFinite(seconds) ? seconds : undefined);
