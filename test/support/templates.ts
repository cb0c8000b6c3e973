import { CIRCUIT_THRESHOLD } from '../../src/modules/operations/application/provider-circuit';
import { TemplateAppsGateway } from '../../src/modules/templates/application/template-apps-gateway';
import { TestApp } from './test-app';

/** Seed members for template tests: wordpress and postgres as the demo's, and two the simulator treats badly. */
export function testTemplates() {
  return [
    {
      id: 'wordpress',
      name: 'WordPress',
      versions: ['6.5', '6.6'],
      variables: [
        { name: 'admin_email', description: 'The administrator account e-mail address', required: true, secret: false },
        { name: 'admin_password', description: 'The administrator account password', required: true, secret: true },
      ],
    },
    {
      id: 'postgres',
      name: 'PostgreSQL',
      versions: ['15', '16'],
      variables: [
        { name: 'password', description: 'The password of the postgres superuser', required: true, secret: true },
        { name: 'database', description: 'A database created at the first start', required: false, secret: false },
      ],
    },
    { id: 'broken', name: 'Broken', versions: ['1'], variables: [], simulate: { deploy: 'fail', health: 'healthy' } },
    { id: 'sick', name: 'Sick', versions: ['1'], variables: [], simulate: { deploy: 'ok', health: 'unhealthy' } },
  ];
}

/** Takes the simulated compute provider's apps down (PROVIDER_DOWN) or back, probing until the circuit agrees. */
export async function setAppsDown(t: TestApp, down: boolean): Promise<void> {
  t.settings.providerDown = down;
  const gateway = t.app.get(TemplateAppsGateway);
  for (let i = 0; i < CIRCUIT_THRESHOLD && gateway.isDown() !== down; i++) await gateway.probeOnce();
  if (gateway.isDown() !== down) throw new Error(`the compute provider's circuit did not ${down ? 'open' : 'close'}`);
}
