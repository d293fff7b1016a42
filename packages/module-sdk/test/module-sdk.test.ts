import { describe, expect, expectTypeOf, it } from 'vitest';

import type * as hub from '@finger/hub';
import type * as sdk from '@finger/module-sdk';

describe('@finger/module-sdk', () => {
  it('is types only: importing it loads no values', async () => {
    const loaded = await import('@finger/module-sdk');
    expect(Object.keys(loaded)).toEqual([]);
  });

  it("is what the hub runs modules with (the hub's types are the SDK's)", () => {
    expectTypeOf<hub.ToolCallContext>().toEqualTypeOf<sdk.ToolCallContext>();
    expectTypeOf<hub.InProcessModuleFactoryOptions>().toEqualTypeOf<sdk.InProcessModuleFactoryOptions>();
    expectTypeOf<hub.InProcessModule>().toEqualTypeOf<sdk.InProcessModule>();
    expectTypeOf<hub.RuntimeHealth>().toEqualTypeOf<sdk.RuntimeHealth>();
    expectTypeOf<hub.Logger>().toEqualTypeOf<sdk.Logger>();
  });
});
