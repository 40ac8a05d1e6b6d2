// Thread: main
// Path aliases of older ixo builds (GATEWAY_LEGACY_ROUTES=true): claims before v4 and token before
// `/minter/`. They are tried after every annotated route, so a current path always wins.

export const LEGACY_ALIASES: readonly { grpcPath: string; pattern: string }[] = [
  { grpcPath: '/ixo.claims.v1beta1.Query/Collection', pattern: '/ixo/collection/{id}' },
  { grpcPath: '/ixo.claims.v1beta1.Query/CollectionList', pattern: '/ixo/collection' },
  { grpcPath: '/ixo.claims.v1beta1.Query/Claim', pattern: '/ixo/claim/{id}' },
  { grpcPath: '/ixo.claims.v1beta1.Query/ClaimList', pattern: '/ixo/claim' },
  { grpcPath: '/ixo.claims.v1beta1.Query/Dispute', pattern: '/ixo/dispute/{proof}' },
  { grpcPath: '/ixo.claims.v1beta1.Query/DisputeList', pattern: '/ixo/dispute' },
  { grpcPath: '/ixo.token.v1beta1.Query/TokenList', pattern: '/ixo/token/{minter}' },
  { grpcPath: '/ixo.token.v1beta1.Query/TokenDoc', pattern: '/ixo/token/{minter}/{contract_address}' },
];
