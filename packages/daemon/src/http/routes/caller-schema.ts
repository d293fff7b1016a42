/** The caller's principal and roles, as the session and whoami routes answer them (JSON Schema properties). */
export const callerProperties = {
  principal: {
    type: 'object',
    required: ['kind', 'id'],
    properties: { kind: { type: 'string' }, id: { type: 'string' } },
  },
  roles: { type: 'array', items: { type: 'string' } },
} as const;
