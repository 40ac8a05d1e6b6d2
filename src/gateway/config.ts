/** Environment variables of the protocol query gateway (filled in by the gateway). */
export const gatewayEnv = {};
