import { test } from 'vitest';
import { RiskAssessor, compileCommandPattern } from '../../src/index.js';
test('scratch', async () => {
  const r = await RiskAssessor.create();
  for (const c of ['ls -la', 'git status && rm -rf ~', 'echo hi > ~/.ssh/authorized_keys', 'echo x > "$F"', 'sh -c "rm -fr /"', 'find . -name x | xargs rm -rf', '$(echo rm) -rf /', 'cat a > out.txt 2>/dev/null', 'git log --oneline -n 20 -- src/index.ts']) {
    const a = r.assess(c);
    console.log(c, '=>', a.level, a.reasons, JSON.stringify(a.model.segments.map(s => ({argv: s.argv, path: s.path, via: s.via, redirects: s.redirects, u: s.unknown_program}))), a.model.flags.redirect_write);
  }
  const p = compileCommandPattern('rm -rf *', 'deny');
  for (const c of ['rm -fr x', 'rm -r -f x', '/bin/rm --recursive --force x', 'r\\m -rf x', "'rm' -rf x", 'bash -lc "rm -rf /"', 'echo hi | xargs rm -rf', 'rm x']) console.log(c, p.test(r.assess(c).model));
  console.log(r.assess(['ls', '-la']).level);
});
